"""Array backend: NumPy on CPU, or torch on CUDA with deterministic settings.

`BITEXACT_BACKEND=numpy|torch` forces one; otherwise torch is used when it imports and sees a
CUDA device. Both backends run the model in float32 with the same operations in the same order.
"""

from __future__ import annotations

import os

import numpy as np

# Arch label -> recurrent-scan tile (tokens per prefill checkpoint). Mimics kernels that pick a
# tile per GPU generation; it decides which cache cases a stale-checkpoint bug can reach.
SCAN_TILES = {"cpu": 6, "sm90": 8, "sm100": 6}
DEFAULT_TILE = 8


class Backend:
    name = "numpy"
    device = "cpu"
    arch = "cpu"

    def asarray(self, a: np.ndarray):
        return np.ascontiguousarray(a, dtype=np.float32)

    def zeros(self, shape):
        return np.zeros(shape, dtype=np.float32)

    def copy(self, a):
        return a.copy()

    def tanh(self, a):
        return np.tanh(a)

    def exp(self, a):
        return np.exp(a)

    def log(self, a):
        return np.log(a)

    def amax(self, a):
        return np.max(a)

    def total(self, a):
        return np.sum(a)

    def argmax(self, a) -> int:
        return int(np.argmax(a))

    def to_numpy(self, rows) -> np.ndarray:
        return np.stack(rows).astype(np.float64)

    def scan_tile(self) -> int:
        override = os.environ.get("BITEXACT_SCAN_TILE")
        if override:
            return int(override)
        return SCAN_TILES.get(self.arch, DEFAULT_TILE)

    def describe(self) -> str:
        return f"{self.name} on {self.device} ({self.arch}, scan tile {self.scan_tile()})"


class TorchBackend(Backend):
    name = "torch"

    def __init__(self, torch, device: str):
        self.torch = torch
        self.device = device
        if device == "cuda":
            major, minor = torch.cuda.get_device_capability()
            self.arch = f"sm{major}{minor}" if minor else f"sm{major}0"
        torch.use_deterministic_algorithms(True)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = False

    def asarray(self, a: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(self.device)

    def zeros(self, shape):
        return self.torch.zeros(shape, dtype=self.torch.float32, device=self.device)

    def copy(self, a):
        return a.clone()

    def tanh(self, a):
        return self.torch.tanh(a)

    def exp(self, a):
        return self.torch.exp(a)

    def log(self, a):
        return self.torch.log(a)

    def amax(self, a):
        return self.torch.max(a)

    def total(self, a):
        return self.torch.sum(a)

    def argmax(self, a) -> int:
        return int(self.torch.argmax(a).item())

    def to_numpy(self, rows) -> np.ndarray:
        return self.torch.stack(rows).cpu().numpy().astype(np.float64)


def _import_torch():
    # cuBLAS reads this when CUDA initialises; setting it later has no effect.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    return torch


def get_backend(name: str | None = None) -> Backend:
    """The backend `name` (or `BITEXACT_BACKEND`), else torch+CUDA when available, else NumPy."""
    name = (name or os.environ.get("BITEXACT_BACKEND") or "").strip().lower()
    if name not in ("", "numpy", "torch"):
        raise ValueError(f"BITEXACT_BACKEND={name!r}: expected 'numpy' or 'torch'")
    if name == "numpy":
        return Backend()
    if name == "torch":
        torch = _import_torch()  # forced: an ImportError here is the right message
        return TorchBackend(torch, "cuda" if torch.cuda.is_available() else "cpu")
    try:
        torch = _import_torch()
    except ImportError:
        return Backend()
    if torch.cuda.is_available():
        return TorchBackend(torch, "cuda")
    return Backend()
