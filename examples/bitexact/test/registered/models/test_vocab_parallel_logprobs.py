"""Vocab-parallel output projection: two shards of the vocabulary, gathered, match one device.

Unlike the cache guards this is a tolerance test: splitting a matrix-vector product changes
which kernel computes each row, so equality is only expected to about 1e-6.
"""

import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bitexact_model import TinyHybridModel  # noqa: E402

try:
    from sglang.test.ci.ci_register import register_cuda_ci
except ImportError:

    def register_cuda_ci(*args, **kwargs):
        return None


register_cuda_ci(
    est_time=30,
    stage="base-b",
    runner_config="2-gpu-large",
    disabled="needs the 2-gpu-large pool, which this example's CI does not have",
)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class TestVocabParallelLogprobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = TinyHybridModel(seed=0, capacity=512)
        rng = np.random.default_rng(7)
        cls.hidden = rng.standard_normal((256, cls.model.dim)).astype(np.float32)
        cls.wo = np.asarray(cls.model.backend.to_numpy([cls.model.wo]))[0].astype(np.float32)

    def test_two_shards_match_one(self):
        half = self.model.vocab // 2
        full = _log_softmax(self.hidden @ self.wo.T)
        shards = [self.hidden @ self.wo[:half].T, self.hidden @ self.wo[half:].T]
        gathered = _log_softmax(np.concatenate(shards, axis=-1))
        np.testing.assert_allclose(gathered, full, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
