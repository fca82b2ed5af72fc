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
    # 12 runs x up to 6 suites; the first run has no history; two h20 runs lack a shard
    assert (replayed["pairs"], replayed["left_out"]) == (60, {"incomplete": 2, "no history": 6})
    assert replayed["earlier"] == [
        "2026-06-16 23:33", "2026-06-17 12:26", "2026-06-17 23:34", "2026-06-18 12:09",
        "2026-06-18 23:35",
    ]  # fmt: skip
    assert replayed["later"] == [
        "2026-06-19 12:21", "2026-06-19 23:25", "2026-06-20 11:40", "2026-06-20 23:29",
        "2026-06-21 11:54", "2026-06-21 23:32",
    ]  # fmt: skip
    # the earlier half picks the product's defaults: 2 passing runs, newest 3, blend with a model
    assert replayed["chosen"] == replayed["default"] == [2, 3, True]
    candidates = replayed["candidates"]
    assert candidates["2/3/blend"]["history_model"] == [0.0401, 0.1294]
    assert candidates["2/3/history"]["history_model"] == [0.0237, 0.1721]


def test_the_errors_are_what_the_committed_runs_give(replayed):
    later = {name: parts["later"] for name, parts in replayed["scores"].items()}
    every = {name: parts["all"] for name, parts in replayed["scores"].items()}
    assert later == {
        "est_time": [0.2612, 0.4649],
        "sglang_model": [0.0295, 0.2081],
        "before_model": [0.0295, 0.2081],  # the model's fit overrode the history
        "history": [0.0406, 0.191],
        "history_model": [0.0317, 0.1855],
    }
    assert every == {
        "est_time": [0.2636, 0.4643],
        "sglang_model": [0.0594, 0.2689],
        "before_model": [0.0414, 0.1513],
        "history": [0.0371, 0.1741],
        "history_model": [0.0354, 0.1386],
    }


def test_the_text_report_names_data_split_and_held_out_verdicts():
    proc = _replay("--pairs")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "60 (run, suite) pairs" in lines[1] and "shards: dispatched" in lines[1]
    row = next(line for line in lines if line.startswith("history_model "))
    assert row.split() == ["history_model", "4.0%", "12.9%", "3.2%", "18.6%", "3.5%", "13.9%",
                           "held", "out:", "missed"]  # fmt: skip
    pair = next(
        line for line in lines if line.startswith("2026-06-21 23:32 base-c-test-4-gpu-h100")
    )
    assert "real=1225s" in pair and "history=-5%" in pair
