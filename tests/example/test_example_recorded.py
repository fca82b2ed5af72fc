"""The demo's recorded runs (examples/bitexact/results/demo-*.json: a 2-core machine under load,
and a 16-core machine idle and with 32 busy loops) give the statuses the README describes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bitexact"
# What the README and the example's README promise the demo prints.
EXPECTED = {
    "test/registered/radix_cache/test_long_prefix_sweep.py": "over",
    "test/registered/radix_cache/test_cache_soak.py": "near",
    "test/registered/models/test_model_determinism.py": "ok",
    "test/registered/radix_cache/test_hybrid_cache_kl_bitexact.py": "stale",
    "test/registered/serving/test_server_launch.py": "timeout",
    "test/registered/models/test_vocab_parallel_logprobs.py": "not-run",
}
RECORDED = sorted((EXAMPLE / "results").glob("demo-*.json"))


def test_runs_of_both_machines_and_loads_are_kept():
    names = {p.stem for p in RECORDED}
    assert {"demo-cpu", "demo-h200-cpu-idle1", "demo-h200-cpu-loaded1"} <= names


@pytest.mark.parametrize("results", RECORDED, ids=lambda p: p.stem)
def test_a_recorded_demo_run_shows_every_status(results: Path, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(EXAMPLE),
         "--results", str(results), "--format", "json", "--out", str(tmp_path / "r.md")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = json.loads(done.stdout)["lines"]
    assert {line["file"]: line["status"] for line in lines} == EXPECTED
