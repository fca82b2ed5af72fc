"""Resume long sequences from many prefix lengths and require bit-identical logprobs.

The short guards use a handful of prefix lengths; this sweep walks split points across
sequences up to 2048 tokens, so a stale state at any tile offset shows up. It is the heavy file
of the suite: its est_time is deliberately tight, which the budget report shows.
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bitexact_model import KLRecorder, TinyHybridModel  # noqa: E402
from bitexact_model.cases import prefix_sweep  # noqa: E402

try:
    from sglang.test.ci.ci_register import register_cuda_ci
except ImportError:

    def register_cuda_ci(*args, **kwargs):
        return None


register_cuda_ci(est_time=5, stage="base-b", runner_config="1-gpu-large")


class TestLongPrefixSweep(KLRecorder, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = TinyHybridModel(seed=0, capacity=2048)
        cls.model.score(cls.model.tokens(0, 256))  # warm-up

    def test_prefix_sweep_medium(self):
        result = prefix_sweep(self.model, lengths=[256, 512, 768], splits_per_length=12)
        self.assertEqual(len(result.hits), 36)
        self.assert_bit_exact(None, result)

    def test_prefix_sweep_long(self):
        result = prefix_sweep(self.model, lengths=[1024, 2048], splits_per_length=10)
        self.assertEqual(len(result.hits), 20)
        self.assert_bit_exact(None, result)


if __name__ == "__main__":
    unittest.main()
