"""Every benchmark still runs (tiny sizes); the numbers themselves are never asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import BENCHMARKS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # every benchmark end to end: minutes on 2 cores
def test_every_benchmark_runs_at_smoke_size():
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WRONG" not in proc.stdout
    for name in BENCHMARKS:
        assert f"running {name}" in proc.stderr
    assert "registry scan: fast, all cores (cold)" in proc.stdout
