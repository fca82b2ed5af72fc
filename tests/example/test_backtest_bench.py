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
    # 24 runs x up to 8 suites; nothing measured before each suite's first run (8 pairs); six
    # (run, suite) lack a shard that did not succeed
    assert (replayed["pairs"], replayed["left_out"]) == (169, {"incomplete": 6, "no history": 8})
    assert replayed["earlier"] == [
        "2026-06-10 23:33", "2026-06-11 12:22", "2026-06-11 23:33", "2026-06-12 12:06",
        "2026-06-12 23:33", "2026-06-13 11:38", "2026-06-13 23:27", "2026-06-14 11:42",
        "2026-06-14 23:30", "2026-06-15 13:05", "2026-06-15 23:36",
    ]  # fmt: skip
    assert replayed["later"] == [
        "2026-06-16 12:37", "2026-06-16 23:33", "2026-06-17 12:26", "2026-06-17 23:34",
        "2026-06-18 12:09", "2026-06-18 23:35", "2026-06-19 12:21", "2026-06-19 23:25",
        "2026-06-20 11:40", "2026-06-20 23:29", "2026-06-21 11:54", "2026-06-21 23:32",
    ]  # fmt: skip
    # the earlier half picks the product's defaults: 2 passing runs, newest 5 (over newest 3:
    # 13.1 % against 13.8 % p90, with a model or without)
    assert replayed["chosen"] == replayed["default"] == [2, 5]
    candidates = replayed["candidates"]
    assert candidates["2/5"] == {
        "history": [0.0295, 0.1313],
        "history_model": [0.0295, 0.1313],  # every file here has 2+ runs: the model adds nothing
        "history_blend": [0.0314, 0.112],
    }
    assert candidates["2/3"]["history"] == [0.0295, 0.1375]


def test_the_errors_are_what_the_committed_runs_give(replayed):
    later = {name: parts["later"] for name, parts in replayed["scores"].items()}
    every = {name: parts["all"] for name, parts in replayed["scores"].items()}
    assert later == {
        "est_time": [0.2651, 1.5814],
        "sglang_model": [0.066, 0.2735],
        "before_model": [0.066, 0.2735],  # the model's fit overrode the history
        "history": [0.0353, 0.1679],  # held out: the median met, the p90 missed
        "history_model": [0.0353, 0.1679],  # never worse than the history: the same here
        "history_blend": [0.053, 0.1645],  # the mean with sglang's prediction: median worse
    }
    assert every == {
        "est_time": [0.2867, 1.465],
        "sglang_model": [0.0603, 0.2853],
        "before_model": [0.0437, 0.2354],
        "history": [0.0344, 0.1375],
        "history_model": [0.0344, 0.1375],
        "history_blend": [0.0398, 0.1631],
    }


def test_the_text_report_names_data_split_and_held_out_verdicts():
    proc = _replay("--pairs")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "169 (run, suite) pairs" in lines[1] and "shards: dispatched" in lines[1]
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("history")}
    assert rows["history"] == ["2.9%", "13.1%", "3.5%", "16.8%", "3.4%", "13.8%",
                               "held", "out:", "missed"]  # fmt: skip
    assert rows["history_model"] == rows["history"]
    assert rows["history_blend"] == ["3.1%", "11.2%", "5.3%", "16.4%", "4.0%", "16.3%",
                                     "held", "out:", "missed"]  # fmt: skip
    pair = next(
        line for line in lines if line.startswith("2026-06-21 23:32 base-c-test-4-gpu-h100")
    )
    assert "real=1225s" in pair and "history=-4%" in pair
