"""The checked-in results of the bundled example's H200 run: real, SM90, and they fill the n/a."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ci_budget.models import RunResults

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bitexact"
RESULTS = EXAMPLE / "results"
GUARD = "test/registered/radix_cache/test_hybrid_cache_kl_bitexact.py"


def _load(name: str) -> RunResults:
    return RunResults.model_validate(json.loads((RESULTS / name).read_text()))


def test_both_runs_detected_an_sm90_gpu_and_kept_per_class_timings():
    for name in ("fixed.json", "reverted-34184.json"):
        run = _load(name)
        assert run.meta.gpu is not None and run.meta.gpu.arch == "sm90"
        assert "H200" in run.meta.gpu.name and run.meta.gpu.compute_capability == "9.0"
        assert run.meta.configured_arch == "sm90"
        guard = next(f for f in run.files if f.path == GUARD)
        setups = {c.name.rsplit("::", 1)[1]: c.class_setup for c in guard.classes}
        assert setups["TestHybridCacheKL"] > 1.0  # CUDA start-up lands in setUpClass


def test_fixed_run_passed_bit_exact_and_reverted_run_went_red():
    fixed, reverted = _load("fixed.json"), _load("reverted-34184.json")
    assert {f.status for f in fixed.files} == {"passed"}
    kls = [
        t.user_properties["avg_kl_div"]
        for f in fixed.files
        for c in f.classes
        for t in c.test_cases
        if "avg_kl_div" in t.user_properties
    ]
    assert kls and all(k == 0.0 for k in kls)
    guard = next(f for f in reverted.files if f.path == GUARD)
    assert guard.status == "failed"
    lazy = [
        t
        for c in guard.classes
        for t in c.test_cases
        if t.nodeid.endswith("TestHybridCacheKLLazy::test_prefill_cache_hit")
    ][0]
    assert lazy.outcome == "failed" and lazy.user_properties["avg_kl_div"] > 0


def test_the_reverted_run_fills_the_sm90_na_cell():
    proc = subprocess.run(
        [
            sys.executable, "-m", "ci_budget.cli", "arch-table", GUARD, "--root", str(EXAMPLE),
            "--fill-from", str(RESULTS / "reverted-34184.json"), "--reverted",
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lazy = [ln for ln in proc.stdout.splitlines() if "lazy test_prefill_cache_hit" in ln][0]
    assert "n/a" not in lazy and "4.71e-03" in lazy
    assert proc.stdout == (RESULTS / "table-filled-sm90.txt").read_text()
    assert "n/a" in (EXAMPLE / GUARD).read_text()  # the example keeps its unverified cell
