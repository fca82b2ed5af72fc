"""History store: dedupe by run, trimming, statistics and the real `ci-budget history` CLI."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.cli import cli

from ci_budget.history.model import History, HistoryError, percentile, run_identity
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.workspace.files import load_history, save_history

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
SUITE = "base-b-test-1-gpu-large"


def _results(i: int, elapsed: float, status: str = "passed", path: str = "test/a.py"):
    return RunResults(
        meta=RunMeta(
            suites=[SUITE],
            commit=f"{i:040x}",
            host=f"gpu-{i % 2}",
            runner_labels=["self-hosted", "1-gpu-large"],
            started_at=T0 + timedelta(days=i),
            finished_at=T0 + timedelta(days=i, hours=1),
        ),
        files=[
            FileResult(path=path, suite=SUITE, est_time=600, elapsed=elapsed, status=status),
            FileResult(path="test/skipped.py", suite=SUITE, status="not-run"),
        ],
    )


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 90) == 9.0
    assert percentile(values, 50) == 5.0
    assert percentile([7.0], 90) == 7.0
    assert percentile([], 90) is None


def test_add_is_idempotent_and_stats_count_only_passing():
    history = History()
    runs = [_results(i, 100.0 + 10 * i) for i in range(9)] + [_results(9, 900.0, "timeout")]
    for r in runs:
        assert history.add_results(r) == 1
    for r in runs:  # the same results again: nothing new
        assert history.add_results(r) == 0
    stats = history.stats("test/a.py", SUITE)
    assert (stats.runs, stats.n, stats.timeouts) == (10, 9, 1)
    assert stats.p90 == 180.0  # ceil(0.9 * 9) = 9th of 100..180
    assert stats.p50 == 140.0
    assert stats.max == 180.0
    assert stats.timeout_lower_bound == 900.0
    assert stats.last_commit == f"{9:040x}"
    assert history.samples("test/skipped.py", SUITE) == []  # not-run measured nothing
    sample = history.samples("test/a.py", SUITE)[0]
    assert sample.host == "gpu-0" and sample.labels == ["self-hosted", "1-gpu-large"]
    assert sample.date == T0 + timedelta(hours=1)


def test_keeps_newest_samples_by_date():
    history = History(max_samples=3)
    for i in reversed(range(6)):  # added newest first: trimming must go by date
        history.add_results(_results(i, float(i)))
    assert [s.elapsed for s in history.samples("test/a.py", SUITE)] == [3.0, 4.0, 5.0]


def test_store_round_trip_and_errors(tmp_path: Path):
    history = History(max_samples=7)
    history.add_results(_results(1, 123.0))
    path = tmp_path / "store" / "h.json"
    save_history(path, history)
    again = load_history(path)
    assert again.max_samples == 7
    assert again.stats("test/a.py", SUITE).p90 == 123.0
    assert again.add_results(_results(1, 123.0)) == 0
    assert load_history(tmp_path / "missing.json").keys() == []
    bad = tmp_path / "bad.json"
    bad.write_text('{"series": [{"file": 3}]}')
    with pytest.raises(HistoryError, match=r"bad\.json: not a ci-budget history store: series\.0"):
        load_history(bad)


def test_run_identity_depends_on_content():
    assert run_identity(_results(1, 5.0)) == run_identity(_results(1, 5.0))
    assert run_identity(_results(1, 5.0)) != run_identity(_results(1, 6.0))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return cli(*args, cwd=cwd)


def test_cli_add_show(tmp_path: Path):
    files = []
    for i in range(4):
        f = tmp_path / f"r{i}.json"
        f.write_text(_results(i, 600.0 + i).model_dump_json())
        files.append(str(f))
    bad = tmp_path / "broken.json"
    bad.write_text('{"files": [{"path": "x.py", "elapsed": "soon"}]}')
    store = str(tmp_path / "h.json")
    first = _cli("history", "add", *files, str(bad), "--history", store, cwd=tmp_path)
    assert first.returncode == 2
    assert "broken.json: not a results file: files.0.elapsed" in first.stderr
    assert "4 sample(s) added" in first.stdout  # good files kept despite the bad one
    second = _cli("history", "add", *files, "--history", store, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "0 sample(s) added" in second.stdout
    shown = _cli("history", "show", "--history", store, "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    (stats,) = json.loads(shown.stdout)
    assert stats["file"] == "test/a.py" and stats["n"] == 4 and stats["p90"] == 603.0
    table = _cli("history", "show", "--history", store, cwd=tmp_path)
    assert "test/a.py" in table.stdout and "603" in table.stdout
    missing = _cli("history", "show", "--history", str(tmp_path / "none.json"), cwd=tmp_path)
    assert missing.returncode == 2 and "none.json: no such history store" in missing.stderr
    chart = _cli("history", "show", "--history", store, "--format", "markdown", "--file", "test/a.py",
                 cwd=tmp_path)  # fmt: skip
    assert chart.returncode == 0, chart.stderr
    assert "| 603s | 601s | 603s | 4 | 4 |" in chart.stdout
    assert '"01-01", "01-02", "01-03", "01-04"' in chart.stdout  # each run on its date
    assert "bar [600.0, 601.0, 602.0, 603.0]" in chart.stdout
    assert "line [600, 600, 600, 600]" in chart.stdout  # the est_time each run had
    unknown = _cli("history", "show", "--history", store, "--file", "test/b.py", cwd=tmp_path)
    assert unknown.returncode == 2 and "no samples of test/b.py (has: test/a.py)" in unknown.stderr
