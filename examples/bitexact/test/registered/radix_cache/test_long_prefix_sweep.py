"""Resume long sequences from many prefix lengths and require bit-identical logprobs.

The short guards use a handful of prefix lengths; this sweep walks split points across
sequences up to 1024 tokens, so a stale state at any tile offset shows up. The long sweep is
time-boxed: it resumes at new split points until the file's process is 7.5 s old, 150 % of its
5 s est_time, so the budget report shows it over budget on an idle and on a loaded machine.
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bitexact_model import KLRecorder, PrefixCache, TinyHybridModel  # noqa: E402
from bitexact_model.cases import CaseResult, avg_kl, prefix_sweep  # noqa: E402
from bitexact_model.pacing import work_until  # noqa: E402

try:
    from sglang.test.ci.ci_register import register_cuda_ci
except ImportError:

    def register_cuda_ci(*args, **kwargs):
        return None


register_cuda_ci(est_time=5, stage="base-b", runner_config="1-gpu-large")


class TestLongPrefixSweep(KLRecorder, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = TinyHybridModel(seed=0, capacity=1024)
        cls.model.score(cls.model.tokens(0, 256))  # warm-up

    def test_prefix_sweep_medium(self):
        result = prefix_sweep(self.model, lengths=[256, 512], splits_per_length=6)
        self.assertEqual(len(result.hits), 12)
        self.assert_bit_exact(None, result)

    def test_prefix_sweep_long(self):
        model = self.model
        sequences = [model.tokens(100 + i, n) for i, n in enumerate((768, 1024))]
        references = [model.score(tokens) for tokens in sequences]
        kls, positions = [], 0

        def resume(i: int) -> None:
            nonlocal positions
            tokens, reference = sequences[i % 2], references[i % 2]
            split = 1 + (97 * i + 13) % (len(tokens) - 1)  # walks every tile offset
            cache = PrefixCache(model)
            cache.prefill(tokens[:split])
            _, start, rows = cache.prefill(tokens)
            self.assertEqual(start, split)
            kls.append(avg_kl(reference[start:], model.backend.to_numpy(rows)))
            positions += len(rows)

        # 150 % of est_time=5 below: over budget, by design.
        work_until(7.5, resume)
        kl = max(kls)
        self.assert_bit_exact(None, CaseResult(kl=kl, positions=positions, hits=[]))


if __name__ == "__main__":
    unittest.main()
