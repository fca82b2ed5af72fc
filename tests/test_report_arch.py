"""The measured report checks the guard tables of the files it ran."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from test_report_cli import clean_env

SGLANG_COPY = (
    Path(__file__).parent / "fixtures" / "arch" / ("test_unified_radix_cache_kl_hybrid_bitexact.py")
)
REL = "test/registered/radix_cache/test_unified_radix_cache_kl_hybrid_bitexact.py"
SUITE = "base-b-test-1-gpu-large"


def _tree(tmp_path: Path) -> None:
    dest = tmp_path / REL
    dest.parent.mkdir(parents=True)
    shutil.copy(SGLANG_COPY, dest)


def _results(tmp_path: Path, gpu: dict | None, kl: float = 0.0) -> Path:
    case = {
        "nodeid": f"{REL}::TestUnifiedHybridLazyBitExact::test_prefill_cache_hit",
        "outcome": "passed",
        "call": 2.0,
        "user_properties": {"avg_kl_div": kl, "kl_case": "lazy test_prefill_cache_hit"},
    }
    meta = {"suites": [SUITE], "runner_config": "1-gpu-large", "configured_arch": "sm90"}
    if gpu:
        meta["gpu"] = gpu
    data = {
        "schema_version": 1,
        "meta": meta,
        "files": [
            {
                "path": REL,
                "elapsed": 700.0,
                "status": "passed",
                "classes": [
                    {
                        "name": f"{REL}::TestUnifiedHybridLazyBitExact",
                        "total": 2.0,
                        "test_cases": [case],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path


OUT = ("--out", "ci-budget-report.md")  # as the action passes it


def _report(tmp_path: Path, *args: str):
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(tmp_path), *args, *OUT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(GITHUB_ACTIONS="true"),
        timeout=120,
    )


def test_unverified_and_silent_rows_reach_the_comment_and_annotations(tmp_path):
    _tree(tmp_path)
    _results(tmp_path, {"name": "NVIDIA H200", "compute_capability": "9.0", "arch": "sm90"}, 0.0)
    proc = _report(tmp_path, "--results", "results.json", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "ci-budget-report.md").read_text()
    assert "Architecture rows not verified on CI hardware" in md
    report = json.loads((tmp_path / "ci-budget-report.json").read_text())
    flags = {(r["group"], r["case"]): r["flags"] for r in report["arch_rows"]}
    assert "unverified on CI arch" in flags[("#34184", "lazy test_prefill_cache_hit")]
    assert "silent on CI arch" in flags[("#34184", "test_logprobs_match")]
    lazy = [r for r in report["arch_rows"] if r["case"] == "lazy test_prefill_cache_hit"][0]
    assert lazy["measured"] == {"sm90": 0.0}  # this run's value, next to the n/a cell
    # annotations point at the table rows, in the file that holds them
    lines = [ln for ln in proc.stdout.splitlines() if "architecture row" in ln]
    assert f"::warning file={REL},line=22,title=architecture row not verified on CI hardware::" in (
        "\n".join(lines)
    )
    assert len(lines) == 2  # unverified + silent on CI arch; "silent everywhere" is informational


def test_a_gpu_of_another_arch_than_configured_is_flagged(tmp_path):
    _tree(tmp_path)
    _results(tmp_path, {"name": "NVIDIA B200", "compute_capability": "10.0", "arch": "sm100"})
    proc = _report(tmp_path, "--results", "results.json", "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert "arch mismatch: runner config '1-gpu-large' is configured as sm90" in proc.stdout
    assert "NVIDIA B200 (sm100)" in proc.stdout


def test_cpu_runs_attach_no_architecture_values(tmp_path):
    _tree(tmp_path)
    _results(tmp_path, None, 3.0)
    proc = _report(tmp_path, "--results", "results.json", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "ci-budget-report.json").read_text())
    assert all(r["measured"] == {} for r in report["arch_rows"])
    assert "no detected GPU arch" not in proc.stdout + proc.stderr
