"""The prediction backtest (benchmarks/backtest_bench.py) replayed on the committed real runs:
its errors are exactly what docs/performance.md reports for that data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "fixtures" / "sglang-ci-stats" / "backtest"


def _replay(*extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.backtest_bench", "--runs", str(DATA / "runs"),
         "--est", str(DATA / "est.json"), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def replayed() -> dict:
    proc = _replay("--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_each_run_is_predicted_from_the_earlier_runs_and_the_later_half_is_held_out(replayed):
    # 8 runs x up to 6 suites; the first run has no history, 06-20 23:29's h20 lacks a shard
    assert (replayed["pairs"], replayed["left_out"]) == (38, {"incomplete": 1, "no history": 6})
    assert replayed["earlier"] == ["2026-06-18 23:35", "2026-06-19 12:21", "2026-06-19 23:25"]
    assert replayed["later"] == [
        "2026-06-20 11:40", "2026-06-20 23:29", "2026-06-21 11:54", "2026-06-21 23:32",
    ]  # fmt: skip
    # the earlier half cannot tell the candidates apart: the tie keeps the product's default
    assert replayed["chosen"] == replayed["default"] == [2, 3]
    assert len({json.dumps(s) for s in replayed["candidates"].values()}) == 1


def test_the_errors_are_what_the_committed_runs_give(replayed):
    later = {name: parts["later"] for name, parts in replayed["scores"].items()}
    every = {name: parts["all"] for name, parts in replayed["scores"].items()}
    assert later == {
        "est_time": [0.2727, 0.4649],
        "sglang_model": [0.0579, 0.1463],
        "before_model": [0.0579, 0.1463],  # the model's fit overrode the history
        "history": [0.0402, 0.1772],
        "history_model": [0.0402, 0.1772],  # giving the model costs nothing
    }
    assert every["history"] == every["history_model"] == [0.0481, 0.1982]
    assert every["sglang_model"] == [0.0789, 0.4256] and every["before_model"] == [0.0455, 0.1982]


def test_the_text_report_names_data_split_and_held_out_verdicts():
    proc = _replay("--pairs")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "38 (run, suite) pairs" in lines[1] and "shards: dispatched" in lines[1]
    row = next(line for line in lines if line.startswith("history "))
    assert row.split() == ["history", "7.4%", "19.8%", "4.0%", "17.7%", "4.8%", "19.8%",
                           "held", "out:", "missed"]  # fmt: skip
    pair = next(
        line for line in lines if line.startswith("2026-06-21 23:32 base-c-test-4-gpu-h100")
    )
    assert "real=1225s" in pair and "history=-5%" in pair
