"""TABLE PLACEHOLDER"""

import sys
import unittest
from pathlib import Path

# The model lives at the example root; this works under pytest and as `python3 FILE -f`.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bitexact_model import KLRecorder, PrefixCache, TinyHybridModel  # noqa: E402
from bitexact_model.cases import (  # noqa: E402
    decode_cache_hit,
    logprobs_match,
    multiturn_branching,
    prefill_cache_hit,
)

try:
    from sglang.test.ci.ci_register import register_cuda_ci
except ImportError:

    def register_cuda_ci(*args, **kwargs):
        return None


register_cuda_ci(est_time=20, stage="base-b", runner_config="1-gpu-large")


def _warm(model: TinyHybridModel, lazy: bool) -> None:
    # One long pass touches every KV row, then each case runs once, so first-call costs
    # (allocation, kernel selection on CUDA) land in setUpClass rather than in a test.
    model.score(model.tokens(0, model.capacity))
    for case in (logprobs_match, prefill_cache_hit, decode_cache_hit, multiturn_branching):
        case(model, PrefixCache(model, lazy=lazy))


class TestHybridCacheKL(KLRecorder, unittest.TestCase):
    lazy = False

    @classmethod
    def setUpClass(cls):
        cls.model = TinyHybridModel(seed=0, capacity=1536)
        print(f"backend: {cls.model.backend.describe()}")
        _warm(cls.model, cls.lazy)

    def cache(self) -> PrefixCache:
        return PrefixCache(self.model, lazy=self.lazy)

    def test_logprobs_match(self):
        result = logprobs_match(self.model, self.cache())
        self.assertEqual(result.hits, [16])
        self.assert_bit_exact("test_logprobs_match", result)

    def test_prefill_cache_hit(self):
        cache = self.cache()
        result = prefill_cache_hit(self.model, cache)
        self.assertEqual(result.hits, [cache.chunk])
        self.assert_bit_exact("test_prefill_cache_hit", result)

    def test_decode_cache_hit(self):
        result = decode_cache_hit(self.model, self.cache())
        self.assertEqual(result.hits, [24])
        self.assert_bit_exact("test_decode_cache_hit", result)

    def test_multiturn_branching(self):
        result = multiturn_branching(self.model, self.cache())
        self.assertEqual(result.hits, [18, 18, 24, 24])
        self.assert_bit_exact("multiturn branching", result)


class TestHybridCacheKLLazy(KLRecorder, unittest.TestCase):
    """Snapshots are materialised on first use, replaying the recurrence from a checkpoint."""

    @classmethod
    def setUpClass(cls):
        cls.model = TinyHybridModel(seed=0, capacity=1536)
        _warm(cls.model, lazy=True)

    def test_prefill_cache_hit(self):
        cache = PrefixCache(self.model, lazy=True)
        result = prefill_cache_hit(self.model, cache)
        self.assertEqual(result.hits, [cache.chunk])
        self.assert_bit_exact("lazy test_prefill_cache_hit", result)


if __name__ == "__main__":
    unittest.main()
