"""Every Mermaid block the reports emit is parsed by Mermaid's own parser (npm `mermaid`, under
Node with jsdom; `npm ci` in tests/mermaid, as .ci/run does). Skipped without node outside CI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers.registry import reg

from ci_budget.budget.diff import HistoryNote, StaticReport
from ci_budget.budget.impact import SuiteImpact
from ci_budget.budget.status import build_report
from ci_budget.config import Config
from ci_budget.history.model import History, Sample
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.render import diff_md, history_md, mermaid, run_md

HERE = Path(__file__).resolve().parents[1] / "mermaid"
SUITE = "base-b-test-1-gpu-large"
HOSTILE = 'x"];\n%%{init: {"theme":"dark"}}%%\nclick A call evil() : # ] [ --> ;'


def _parser_or_skip():
    node = shutil.which("node")
    if node and (HERE / "node_modules" / "mermaid").is_dir():
        return node
    if os.environ.get("CI"):
        pytest.fail(
            "node and tests/mermaid/node_modules are required in CI (.ci/run installs them)"
        )
    pytest.skip("needs node and `npm ci` in tests/mermaid")


def parse(blocks: list[str]) -> list[dict]:
    node = _parser_or_skip()
    done = subprocess.run(
        [node, str(HERE / "parse.mjs")], input=json.dumps(blocks), capture_output=True,
        text=True, cwd=HERE, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def blocks_of(markdown: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```\n", markdown, flags=re.S)


def _run_report(name: str = "test_a.py"):
    files = [f"test/registered/{name}", "test/registered/b/test_b.py", "test/registered/c.py"]
    regs = [reg(f, est, SUITE, line=3) for f, est in zip(files, (5, 10, 30), strict=True)]
    results = [
        FileResult(path=f, suite=SUITE, elapsed=e, status=s)
        for f, e, s in zip(files, (8.4, 8.6, 2.0), ("passed", "passed", "timeout"), strict=True)
    ]
    return build_report(regs, [RunResults(meta=RunMeta(suites=[SUITE]), files=results)], Config())


def _history(file: str, runs: int = 12) -> History:
    history = History()
    for i in range(runs):
        day = datetime(2026, 11, 1 + i // 2, tzinfo=timezone.utc)  # two runs a day
        sample = Sample(run=f"r{i}", elapsed=600 + 7 * i, status="passed", est_time=600, date=day)
        history.add_sample(file, SUITE, sample)
    return history


def _static_report(suite: str = SUITE, file: str = "test/registered/test_a.py") -> StaticReport:
    impact = SuiteImpact(suite=suite, backend="cuda", files_before=2, files_after=2,
                         est_before=900, est_after=1090, shards_before=1, shards_after=2,
                         makespan_before=900, makespan_after=790, timeout_s=1200,
                         loads_before=[900], loads_after=[790, 300])  # fmt: skip
    over = impact.model_copy(
        update={"suite": "base-a-test-8-gpu-h200", "makespan_after": 1300,
                "loads_after": [1300, 1250, 40]}
    )  # fmt: skip
    history = _history(file)
    note = HistoryNote(file=file, suite=SUITE, est_time=790, stats=history.stats(file, SUITE),
                       trend=history.trend(file, SUITE))  # fmt: skip
    return StaticReport(base_ref="main", suites=[impact, over], history=[note])


def test_every_emitted_block_parses():
    history = _history("test/registered/test_a.py")
    stats = history.all_stats()
    trends = {(s.file, s.suite): history.trend(s.file, s.suite) for s in stats}
    emitted = blocks_of(run_md.markdown(_run_report())) + blocks_of(
        diff_md.markdown(_static_report())
    )
    emitted += blocks_of(history_md.markdown(stats, trends))
    kinds = [b.split("\n", 1)[0] for b in emitted]
    assert kinds == ["xychart-beta horizontal", "gantt", "gantt", "xychart-beta", "xychart-beta"]
    results = parse(emitted)
    assert [r["ok"] for r in results] == [True] * 5, results
    assert [r["type"] for r in results] == ["xychart", "gantt", "gantt", "xychart", "xychart"]


def test_hostile_names_stay_labels():
    emitted = blocks_of(run_md.markdown(_run_report(HOSTILE + ".py"))) + blocks_of(
        diff_md.markdown(_static_report(HOSTILE))
    )
    for b in emitted:  # no directive, no quote or bracket from the name, no new statement
        assert "%%" not in b and "evil()" not in b and HOSTILE.split("\n")[0] not in b
    assert all(r["ok"] for r in parse(emitted))


def test_the_parser_catches_a_broken_block():
    (result,) = parse(["xychart-beta\n    bar [1,\n"])
    assert not result["ok"] and "Parse error" in result["error"]


def test_pictures_are_dropped_first_with_a_note():
    report = _run_report()
    full = run_md.markdown(report)
    picture = blocks_of(full)[0]
    tight = run_md.markdown(report, limit=len(full) - len(picture) // 2)
    assert blocks_of(tight) == []
    assert "picture(s) not shown (too long for one comment)" in tight
    assert "| `test_a.py` |" in tight  # the tables stayed


def test_labels_keep_only_safe_characters():
    text = mermaid.label(HOSTILE)
    assert len(text) <= 40 and re.fullmatch(r"[A-Za-z0-9_./+ -]+", text)


def test_the_gantt_shows_every_shard_before_and_after_against_the_timeout():
    report = _static_report()
    (first, second), _ = diff_md.pictures(report)
    assert "base-a-test-8-gpu-h200" in first  # the suite over its timeout comes first
    assert "1 → 3 shard(s) vs its 20 min timeout" in first
    assert first.count(":crit, ") == 2  # the two shards past 1,200 s
    assert "shard 3 40s :a3, 00:00:00, 00:00:40" in first
    assert ":milestone, t, 00:20:00, 00:20:00" in first  # the diamond sits at the timeout
    assert "shard 2 300s :a2, 00:00:00, 00:05:00" in second and "20 min" in second
    # times of day, not unix seconds: the axis starts at 00:00 in every viewer's time zone
    assert "dateFormat HH:mm:ss" in first and mermaid._clock(3 * 3600 + 61.4) == "03:01:01"


def test_the_history_chart_is_the_rolling_p50_p90_and_the_budget_over_time():
    _, (chart,) = diff_md.pictures(_static_report())
    lines = chart.splitlines()
    assert '"11-01", "11-01.2", "11-02"' in lines[3]  # a day's second run keeps its own slot
    bars, p50, p90, est = (json.loads(line.split(" ", 5)[-1]) for line in lines[5:9])
    assert bars == [600 + 7 * i for i in range(12)]
    assert p90[-1] == 670 and p50[-1] == 642  # 9th and 5th of the last 10: 614 .. 677
    assert est == [600] * 11 + [790]  # the PR's new budget is the last point


def test_history_pictures_fit_the_comment_or_are_dropped_with_a_note():
    report = _static_report()
    full = diff_md.markdown(report)
    tight = diff_md.markdown(report, limit=len(full) - 200)
    assert len(tight) <= len(full) - 200
    assert len(blocks_of(tight)) == len(blocks_of(full)) - 1  # the last picture went first
    assert "picture(s) not shown (too long for one comment)" in tight


@pytest.mark.slow  # Node parses both example comments
def test_the_example_comments_pictures_parse(tmp_path):
    """The README's pictures come from `scripts/example_comments.py`, from results kept in the
    repository: both comments' blocks parse, and the PR's shards and history are drawn."""
    sys.path.insert(0, str(HERE.parents[1] / "scripts"))
    import example_comments

    run = blocks_of(example_comments.run_comment(tmp_path))
    budget = blocks_of(example_comments.budget_comment(tmp_path))
    assert [b.split("\n", 1)[0] for b in run + budget] == [
        "xychart-beta horizontal",
        "gantt",
        "xychart-beta",
    ]
    gantt, trend = budget
    assert "1 → 2 shard(s)" in gantt and "shard 1 700s :crit, a1, 00:00:00, 00:11:40" in gantt
    assert "test_long_prefix_sweep" in trend and trend.count("bar [") == 1
    assert all(r["ok"] for r in parse(run + budget))


def _suite(
    name: str, before: list[float], after: list[float], timeout: float = 1800
) -> SuiteImpact:
    return SuiteImpact(
        suite=name, backend="cuda", files_before=len(before), files_after=len(after),
        shards_before=len(before), shards_after=len(after), loads_before=before,
        loads_after=after, makespan_before=max(before), makespan_after=max(after),
        timeout_s=timeout,
    )  # fmt: skip


def test_only_material_suites_get_a_gantt_and_at_most_three_pictures_in_all():
    """#35407's shape: six suites, two of which change their shard count; the others' makespan
    moves by seconds. A dozen history charts wait behind them, three pictures in all."""
    flat = [_suite(f"base-b-test-{i}", [1300.0] * 11, [1310.0] * 11) for i in range(4)]
    resharded = [
        _suite("base-b-test-2-gpu-large", [1350.0] * 5, [1171.0] * 7),
        _suite("base-c-test-4-gpu-h100", [1130.0] * 5, [1239.0] * 3),
    ]
    history = _history("test/registered/test_a.py")
    notes = [
        HistoryNote(file=f"test/registered/test_{i}.py", suite=SUITE, est_time=900,
                    stats=history.stats("test/registered/test_a.py", SUITE),
                    trend=history.trend("test/registered/test_a.py", SUITE))
        for i in range(12)
    ]  # fmt: skip
    report = StaticReport(base_ref="main", suites=flat + resharded, history=notes)
    assert [mermaid.material(s) for s in report.suites] == [False] * 4 + [True] * 2
    gantts, charts = diff_md.pictures(report)
    assert len(gantts) == 2 and len(charts) == 1
    text = diff_md.markdown(report)
    assert text.count("```mermaid") == 3
    assert all(r["ok"] for r in parse(blocks_of(text)))


def test_a_suite_of_many_shards_is_drawn_as_longest_median_and_shortest():
    s = _suite("base-b-test-1-gpu-large", [1326.0 - i for i in range(11)], [1345.0] * 12)
    chart = mermaid.shard_gantt(s)
    bars = [line for line in chart.splitlines() if "00:00:00," in line]
    assert len(bars) == 6  # three a section, not 23
    assert "shard 1 longest of 11 1326s :b1" in chart and "shard 11 shortest of 11 1316s" in chart
    assert "shard 1 longest of 12 1345s :a1" in chart and "median of 12" in chart
    assert all(r["ok"] for r in parse([chart.removeprefix("```mermaid\n").removesuffix("```\n")]))


def test_a_picture_about_the_verdict_comes_first():
    """A suite this PR puts near its timeout is drawn before a bigger change that is fine, and
    a history chart of a file whose new est_time is below its p90 before the other Gantts."""
    fine = [_suite(f"base-a-test-{i}", [600.0] * 2, [300.0] * 4) for i in range(3)]
    risky = _suite("base-c-test-4-gpu-b200", [1000.0] * 2, [1700.0])
    risky.risk = "near"
    history = _history("test/registered/test_a.py")  # p90 up to 677 s
    low = HistoryNote(file="test/registered/test_a.py", suite=SUITE, est_time=600,
                      stats=history.stats("test/registered/test_a.py", SUITE),
                      trend=history.trend("test/registered/test_a.py", SUITE))  # fmt: skip
    gantts, charts = diff_md.pictures(StaticReport(suites=[*fine, risky], history=[low]))
    assert "base-c-test-4-gpu-b200" in gantts[0] and len(gantts) == 2 and len(charts) == 1
