"""Soak one long-lived prefix cache with conversations that share system prompts.

The guards each start from a fresh cache; this file keeps one cache for many requests, so
snapshots pile up, branch and get reused across conversations, as in a serving process. Every
request's cached logprobs must equal the uncached ones bit for bit.

A soak is time-boxed: it sends requests until the file's process is 8.1 s old, 81 % of its
10 s est_time, so the budget report shows it near its budget on an idle and on a loaded machine.
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bitexact_model import KLRecorder, PrefixCache, TinyHybridModel  # noqa: E402
from bitexact_model.cases import CaseResult, avg_kl  # noqa: E402
from bitexact_model.pacing import work_until  # noqa: E402

try:
    from sglang.test.ci.ci_register import register_cuda_ci
except ImportError:

    def register_cuda_ci(*args, **kwargs):
        return None


register_cuda_ci(est_time=10, stage="base-b", runner_config="1-gpu-large")


class TestCacheSoak(KLRecorder, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = TinyHybridModel(seed=0, capacity=128)
        cls.systems = [cls.model.tokens(500 + k, 20 + 7 * k) for k in range(4)]

    def test_shared_prompts_soak(self):
        model, cache = self.model, PrefixCache(self.model)
        kls, hits = [], []

        def request(i: int) -> None:
            tokens = self.systems[i % 4] + model.tokens(2000 + i, 24)
            _, start, rows = cache.prefill(tokens)
            kls.append(avg_kl(model.score(tokens)[start:], model.backend.to_numpy(rows)))
            hits.append(start)

        # 81 % of est_time=10 above: near its budget, by design.
        work_until(8.1, request)
        if len(hits) > 4:  # every conversation after the first four resumes a system prompt
            self.assertTrue(all(h > 0 for h in hits[4:]), hits)
        self.assert_bit_exact(None, CaseResult(kl=max(kls), positions=len(kls), hits=hits))


if __name__ == "__main__":
    unittest.main()
