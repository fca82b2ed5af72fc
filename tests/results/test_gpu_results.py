"""The checked-in results of the bundled example's H200 run: real, SM90, and they fill the n/a."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ci_budget.models import RunResults

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bitexact"
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
            sys.executable, "-m", "ci_budget.cli", "guard", "fill", GUARD, "--root", str(EXAMPLE),
            "--fill-from", str(RESULTS / "reverted-34184.json"), "--reverted",
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lazy = [ln for ln in proc.stdout.splitlines() if "lazy test_prefill_cache_hit" in ln][0]
    assert "n/a" not in lazy and "4.71e-03" in lazy
    assert proc.stdout == (RESULTS / "table-filled-sm90.txt").read_text()
    assert "n/a" in (EXAMPLE / GUARD).read_text()  # the example keeps its unverified cell


# ---- `guard verify` on the H200: #34184 reverted from its patch, in a git worktree -----------

VERIFY = "guard-verify-34184"


def test_guard_verify_on_the_h200_filled_the_sm90_column_lazy_row_included():
    from ci_budget.models import GuardVerification

    saved = GuardVerification.model_validate_json(
        (RESULTS / f"{VERIFY}.verification.json").read_text()
    )
    assert (saved.arch, saved.group, saved.reverted) == (
        "sm90",
        "#34184",
        ["patch fixes/34184.patch"],
    )
    values = {(v.group, v.case): v for v in saved.values}
    lazy = values[("#34184", "lazy test_prefill_cache_hit")]
    assert lazy.reverted and lazy.reverted > 0 and lazy.fixed == 0.0
    assert all(v.fixed == 0.0 for v in saved.values)  # the unreverted tree is bit-exact
    assert values[("#29792", "multiturn branching")].reverted is None  # another fix's row
    for name in ("guard-verify-reverted-34184.json", "guard-verify-fixed.json"):
        run = _load(name)
        assert run.meta.gpu.arch == "sm90" and "H200" in run.meta.gpu.name
    printed = (RESULTS / f"{VERIFY}.txt").read_text()
    row = [ln for ln in printed.splitlines() if "lazy test_prefill_cache_hit" in ln][0]
    assert "n/a" not in row and format(lazy.reverted, ".2e") in row
    assert "unverified" not in printed


def _filled_copy(tmp_path: Path) -> Path:
    """The example with its table filled from the stored runs, the way `guard verify --write`
    filled it on the GPU machine (guard fill over the same two results files)."""
    import shutil

    from ci_budget.cli import main

    root = tmp_path / "bitexact"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("results", "__pycache__"))
    fill = ["guard", "fill", GUARD, "--root", str(root), "--write", "--fill-from"]
    assert main([*fill, str(RESULTS / "guard-verify-reverted-34184.json"), "--reverted",
                 "--group", "#34184"]) == 0  # fmt: skip
    assert main([*fill, str(RESULTS / "guard-verify-fixed.json")]) == 0
    return root


def test_the_stored_runs_reproduce_the_table_guard_verify_printed(tmp_path, capsys):
    root = _filled_copy(tmp_path)
    capsys.readouterr()
    from ci_budget.cli import main

    assert main(["guard", "fill", GUARD, "--root", str(root)]) == 0
    table = capsys.readouterr().out.splitlines()[1:]
    printed = (RESULTS / f"{VERIFY}.txt").read_text().splitlines()
    assert table == printed[2 : 2 + len(table)]


def test_the_pr_comment_no_longer_flags_the_lazy_row(tmp_path):
    from ci_budget.cli import main

    stored = (RESULTS / f"report-{VERIFY}.md").read_text()
    assert "silent on CI arch" in stored and "unverified" not in stored
    assert "lazy test_prefill_cache_hit" not in stored
    report = json.loads((RESULTS / f"report-{VERIFY}.json").read_text())
    lazy = [r for r in report["arch_rows"] if r["case"] == "lazy test_prefill_cache_hit"][0]
    assert lazy["flags"] == [] and lazy["reverted"]["sm90"]["values"][0] > 0
    # regenerated here from the stored run over the filled file: the same verdict
    root = _filled_copy(tmp_path)
    out = tmp_path / "report.md"
    results = str(RESULTS / "guard-verify-reverted-34184.json")
    main(["report", "--root", str(root), "--results", results, "--out", str(out)])
    assert "lazy test_prefill_cache_hit" not in out.read_text()
    # and over the example as committed, the lazy row is still the one flagged unverified
    out2 = tmp_path / "report-committed.md"
    main(["report", "--root", str(EXAMPLE), "--results", results, "--out", str(out2)])
    lines = out2.read_text().splitlines()
    assert "1 guard row unverified on SM90 (lazy test_prefill_cache_hit)" in lines[1]
    flagged = [ln for ln in lines if ln.startswith("|") and "lazy test_prefill_cache_hit" in ln]
    assert flagged and "unverified on CI arch" in flagged[0]
