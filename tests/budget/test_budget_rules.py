"""Budget rules a workflow or a reader branches on, pinned by value: the one-word status, the
unregistered-file rule, which registration a result is compared with, which of two results for
the same file is kept, and what each line and suite total carries."""

from __future__ import annotations

import pytest
from helpers.registry import reg

from ci_budget.budget.status import (
    STATUS_ORDER,
    SUGGEST_FOR,
    UNREGISTERED,
    budget_status,
    build_report,
    pick,
    sort_key,
    worst_status,
)
from ci_budget.config import Config, parse_config
from ci_budget.models import (
    ArchRow,
    BudgetLine,
    FileResult,
    GpuInfo,
    Problem,
    RegistryScan,
    Report,
    RunMeta,
    RunResults,
)

SUITE = "base-b-test-1-gpu-large"
OTHER = "base-c-test-2-gpu-large"
CONFIG = Config()


def res(path, elapsed, status="passed", suite=SUITE, **kw):
    return FileResult(path=path, suite=suite, elapsed=elapsed, status=status, **kw)


def run(*files, suites=(SUITE,), **meta):
    return RunResults(meta=RunMeta(suites=list(suites), **meta), files=list(files))


def lines_by_file(report):
    return {line.file: line for line in report.lines}


# --- worst_status: the action's `status` output --------------------------------------------

# One file per budget status, against est_time 100.
EXAMPLES = {
    "timeout": res("t/timeout.py", 150, "timeout", timeout=150),
    "over": res("t/over.py", 120),
    "failed": res("t/failed.py", 10, "failed"),
    "near": res("t/near.py", 90),
    "stale": res("t/stale.py", 10),
    "ok": res("t/ok.py", 60),
    "cancelled": res("t/cancelled.py", 95, "cancelled"),
    "not-run": res("t/notrun.py", 0, "not-run"),
}


def report_with(statuses):
    files = [EXAMPLES[s] for s in statuses]
    report = build_report([reg(f.path, 100) for f in files], [run(*files)], CONFIG)
    assert sorted(line.status for line in report.lines) == sorted(statuses)
    return report


@pytest.mark.parametrize("status", list(EXAMPLES))
def test_each_example_has_the_status_it_is_named_for(status):
    assert report_with([status]).lines[0].status == status


@pytest.mark.parametrize(
    "statuses, word",
    [
        (["timeout", "over", "failed", "near", "stale", "ok", "cancelled", "not-run"], "timeout"),
        (["over", "failed", "near", "stale", "ok", "cancelled", "not-run"], "over"),
        (["failed", "near", "stale", "ok", "cancelled", "not-run"], "failed"),
        (["near", "stale", "ok", "cancelled", "not-run"], "near"),
        (["stale", "ok", "cancelled", "not-run"], "ok"),
        (["cancelled"], "ok"),  # a stopped run says nothing about the budget
        (["timeout"], "timeout"),
        (["over"], "over"),
        (["failed"], "failed"),
        (["near"], "near"),
        (["ok"], "ok"),
        (["stale"], "ok"),  # a generous budget is not a problem for the workflow
        (["not-run"], "ok"),
        ([], "ok"),
    ],
)
def test_worst_status_is_the_first_present_of_timeout_over_failed_near(statuses, word):
    assert worst_status(report_with(statuses)) == word


def test_worst_status_reads_the_lines_not_their_order():
    lines = [
        BudgetLine(file=f"t/{s}.py", suite=SUITE, est_time=1, status=s)
        for s in ("near", "failed", "over", "ok")
    ]
    assert worst_status(Report(lines=lines)) == "over"
    assert worst_status(Report(lines=lines[:2])) == "failed"


def test_status_order_and_suggestions_are_the_documented_ones():
    assert STATUS_ORDER == (
        "timeout", "over", "failed", "flaky", "near", "stale", "ok", "cancelled", "not-run",
    )  # fmt: skip
    assert set(SUGGEST_FOR) == {"over", "near", "stale"}
    assert UNREGISTERED == "(unregistered)"


@pytest.mark.parametrize(
    "file_status, ratio, want",
    [
        ("timeout", 0.1, "timeout"),
        ("timeout", None, "timeout"),
        ("failed", 0.6, "failed"),
        ("crashed", 0.6, "failed"),
        ("crashed", None, "failed"),
        ("cancelled", 2.0, "cancelled"),
        ("cancelled", None, "cancelled"),
        ("not-run", 2.0, "not-run"),
        ("passed", None, "not-run"),
        ("passed", 1.0000001, "over"),
        ("passed", 1.0, "near"),
        ("passed", 0.8000001, "near"),
        ("passed", 0.8, "ok"),
        ("passed", 0.5, "ok"),
        ("passed", 0.4999999, "stale"),
        ("passed", 0.0, "stale"),
    ],
)
def test_budget_status_rules(file_status, ratio, want):
    assert budget_status(file_status, ratio, CONFIG) == want


# --- files with results but no registration ------------------------------------------------


@pytest.mark.parametrize(
    "status, want, suggestion",
    [
        ("passed", "ok", 60),
        ("failed", "failed", None),
        ("crashed", "failed", None),
        ("timeout", "timeout", 60),
        ("cancelled", "cancelled", None),
        ("not-run", "not-run", None),
    ],
)
def test_unregistered_file_keeps_a_failure_or_timeout(status, want, suggestion):
    report = build_report([reg("t/a.py", 100)], [run(res("t/new.py", 42, status))], CONFIG)
    (line,) = report.lines
    assert (line.file, line.suite, line.status, line.est_time) == ("t/new.py", SUITE, want, 0)
    assert line.suggestion == suggestion
    assert line.line == 0
    assert line.ratio is None
    assert [w.file for w in report.warnings] == ["t/new.py"]


def test_unregistered_file_with_a_budget_in_its_result_is_compared_with_it():
    files = [
        res("t/x.py", 150, est_time=100),
        res("t/y.py", 10, est_time=100),
        res("t/z.py", 90, est_time=100),
    ]
    lines = lines_by_file(build_report([], [run(*files)], CONFIG))
    assert [(lines[f].status, lines[f].est_time) for f in ("t/x.py", "t/y.py", "t/z.py")] == [
        ("over", 100),
        ("stale", 100),
        ("near", 100),
    ]
    assert lines["t/x.py"].suggestion == 180


def test_unregistered_file_without_a_suite_goes_to_the_unregistered_bucket():
    report = build_report([], [run(res("t/new.py", 5, suite=None), suites=())], CONFIG)
    (line,) = report.lines
    assert line.suite == UNREGISTERED and line.status == "ok"
    assert [t.suite for t in report.suites] == [UNREGISTERED]


# --- which registration a result is compared with ------------------------------------------


def test_file_in_several_suites_is_compared_with_the_suite_it_ran_in():
    regs = [reg("t/a.py", 100, line=3), reg("t/a.py", 300, OTHER, line=9)]
    report = build_report(regs, [run(res("t/a.py", 250))], CONFIG)
    (line,) = report.lines
    assert (line.suite, line.est_time, line.status, line.line, line.gpus) == (
        SUITE,
        100,
        "over",
        3,
        1,
    )
    assert report.notes == [] and report.warnings == []
    report = build_report(regs, [run(res("t/a.py", 250, suite=OTHER), suites=[OTHER])], CONFIG)
    (line,) = report.lines
    assert (line.suite, line.est_time, line.status, line.line, line.gpus) == (
        OTHER,
        300,
        "near",
        9,
        2,
    )
    assert report.notes == []


def test_unknown_suite_is_compared_with_the_largest_budget_and_noted():
    regs = [reg("t/a.py", 300, line=3), reg("t/a.py", 100, OTHER, line=9)]
    report = build_report(regs, [run(res("t/a.py", 250, suite="weird"))], CONFIG)
    (line,) = report.lines
    assert (line.suite, line.est_time, line.line) == ("weird", 300, 3)
    (note,) = report.notes  # the wording is the renderer's; the facts are pinned
    assert "t/a.py" in note and "weird" in note and SUITE in note and "(300s)" in note


def test_equal_budgets_in_several_suites_pick_the_last_suite_by_name():
    regs = [reg("t/a.py", 100, OTHER), reg("t/a.py", 100)]
    report = build_report(regs, [run(res("t/a.py", 50, suite="weird"))], CONFIG)
    assert OTHER in report.notes[0]  # "base-c..." sorts after "base-b..."


def test_result_without_suite_in_a_multi_suite_run_uses_its_registration():
    regs = [reg("t/a.py", 100), reg("t/b.py", 200, OTHER)]
    files = [res("t/a.py", 50, suite=None), res("t/b.py", 50, suite=None)]
    report = build_report(regs, [run(*files, suites=[SUITE, OTHER])], CONFIG)
    assert [(x.file, x.suite, x.est_time) for x in report.lines] == [
        ("t/b.py", OTHER, 200),
        ("t/a.py", SUITE, 100),
    ]
    assert report.notes == []


# --- retried shards: which result is kept --------------------------------------------------


def test_pick_prefers_a_run_then_the_later_result():
    passed, failed = res("t/a.py", 1), res("t/a.py", 2, "failed")
    not_run, not_run2 = res("t/a.py", 0, "not-run"), res("t/a.py", 0, "not-run")
    assert pick(failed, passed) is passed
    assert pick(passed, failed) is failed
    assert pick(passed, not_run) is passed
    assert pick(not_run, passed) is passed
    assert pick(not_run, not_run2) is not_run2


def test_retried_shard_later_result_wins():
    regs = [reg("t/a.py", 100), reg("t/b.py", 100)]
    first = run(res("t/a.py", 130, "failed"), res("t/b.py", 60), partition="0/1")
    retry = run(res("t/a.py", 70), res("t/b.py", 95, "failed"), runner_config="2-gpu-large")
    lines = lines_by_file(build_report(regs, [first, retry], CONFIG))
    assert (lines["t/a.py"].status, lines["t/a.py"].measured) == ("ok", 70)
    assert (lines["t/b.py"].status, lines["t/b.py"].measured) == ("failed", 95)
    report = build_report(regs, [retry, first], CONFIG)
    lines = lines_by_file(report)
    assert (lines["t/a.py"].status, lines["t/a.py"].measured) == ("failed", 130)
    assert (lines["t/b.py"].status, lines["t/b.py"].measured) == ("ok", 60)
    first_note, second_note = report.notes
    assert "t/a.py" in first_note and first_note.endswith("kept the failed one")
    assert "t/b.py" in second_note and second_note.endswith("kept the passed one")


def test_kept_result_brings_its_own_runner():
    regs = [reg("t/a.py", 100, runner="custom")]
    config = parse_config({"runner-configs": {"custom": {"gpus": 0}}}, "t")
    config.runner_configs.clear()  # the registration's runner is unknown: the run's meta counts
    first = run(res("t/a.py", 10), runner_config="8-gpu-h200")
    retry = run(res("t/a.py", 20), runner_config="2-gpu-large")
    (line,) = build_report(regs, [first, retry], config).lines
    assert (line.measured, line.gpus, line.gpu_seconds) == (20, 2, 40)
    skipped = run(res("t/a.py", 0, "not-run"), runner_config="2-gpu-large")
    (line,) = build_report(regs, [first, skipped], config).lines
    assert (line.measured, line.gpus, line.gpu_seconds) == (10, 8, 80)


# --- GPUs per line ---------------------------------------------------------------------------


def test_gpus_come_from_the_registration_then_the_run_then_the_gpu_seen():
    unknown = reg("t/a.py", 100, runner="nowhere")
    cases = [
        (reg("t/a.py", 100, runner="4-gpu-h100"), RunMeta(runner_config="2-gpu-large"), 4),
        (unknown, RunMeta(runner_config="2-gpu-large"), 2),
        (unknown, RunMeta(gpu=GpuInfo(name="H200", count=8)), 8),
        (unknown, RunMeta(), 1),
        (reg("t/a.py", 100, runner="nowhere", backend="cpu"), RunMeta(), 0),
        (reg("t/a.py", 100, runner="cpu", backend="cpu"), RunMeta(gpu=GpuInfo(name="H200")), 0),
    ]
    for registration, meta, gpus in cases:
        meta.suites = [SUITE]
        results = RunResults(meta=meta, files=[res("t/a.py", 10)])
        (line,) = build_report([registration], [results], CONFIG).lines
        assert (line.gpus, line.gpu_seconds) == (gpus, 10 * gpus), registration.runner_config


def test_unregistered_file_counts_one_gpu_unless_the_run_says_otherwise():
    (line,) = build_report([], [run(res("t/a.py", 10))], CONFIG).lines
    assert line.gpus == 1
    (line,) = build_report([], [run(res("t/a.py", 10), runner_config="8-gpu-b200")], CONFIG).lines
    assert line.gpus == 8


# --- suggestions and messages ----------------------------------------------------------------


def test_timeout_suggestion_from_the_larger_of_elapsed_and_limit():
    def line(**kw):
        return build_report(
            [reg("t/a.py", 100)], [run(res("t/a.py", 300, "timeout", **kw))], CONFIG
        ).lines[0]

    assert line().suggestion == 360  # no limit recorded: elapsed
    assert line(timeout=200).suggestion == 360  # elapsed past the limit
    assert line(timeout=400).suggestion == 480
    assert line(timeout=400).message == (
        "timed out after 400s; est_time=480 is a lower bound (the real run time is unknown)"
    )
    assert line(timeout=400, message="killed").message == (
        "killed; timed out after 400s; est_time=480 is a lower bound (the real run time is unknown)"
    )
    assert line(timeout=400, message="timed out after 400s").message == (
        "timed out after 400s; est_time=480 is a lower bound (the real run time is unknown)"
    )


def test_message_is_carried_when_nothing_is_added():
    (line,) = build_report(
        [reg("t/a.py", 100)], [run(res("t/a.py", 50, "failed", message="boom"))], CONFIG
    ).lines
    assert (line.message, line.suggestion) == ("boom", None)


def test_headroom_and_ratio_are_none_without_a_measurement():
    (line,) = build_report([reg("t/a.py", 100)], [run(res("t/a.py", 7, "not-run"))], CONFIG).lines
    assert (line.measured, line.ratio, line.headroom, line.gpu_seconds) == (None, None, None, 0)
    (line,) = build_report([reg("t/a.py", 0)], [run(res("t/a.py", 7))], CONFIG).lines
    # est_time=0 that ran: over by any time (no ratio to show), never `not-run`
    assert (line.measured, line.ratio, line.status, line.headroom) == (7, None, "over", -7)
    (line,) = build_report([reg("t/a.py", 0)], [run(res("t/a.py", 0))], CONFIG).lines
    # ...and one that ran in no measurable time is within it
    assert (line.measured, line.ratio, line.status, line.headroom) == (0, None, "ok", 0)


# --- totals, order, problems -----------------------------------------------------------------


def test_suite_totals_count_each_status():
    files = [
        res("t/o1.py", 120),
        res("t/o2.py", 130),
        res("t/n1.py", 90),
        res("t/t1.py", 200, "timeout"),
        res("t/t2.py", 200, "timeout"),
        res("t/t3.py", 200, "timeout"),
        res("t/f1.py", 5, "failed"),
        res("t/ok.py", 60),
        res("t/x.py", 1, suite=OTHER),
    ]
    regs = [reg(f.path, 100, f.suite) for f in files]
    report = build_report(regs, [run(*files, suites=[SUITE, OTHER])], CONFIG)
    first, second = report.suites
    assert first.suite == SUITE and second.suite == OTHER
    assert (first.files, first.over, first.near, first.timeouts, first.failed) == (8, 2, 1, 3, 1)
    assert (first.est_total, first.measured_total, first.gpu_seconds) == (800, 1005, 1005)
    assert (second.files, second.over, second.near, second.timeouts, second.failed) == (
        1, 0, 0, 0, 0,
    )  # fmt: skip


def test_sort_key_puts_unmeasured_lines_last_within_a_status():
    measured = BudgetLine(file="t/z.py", suite=SUITE, est_time=1, ratio=0.0, status="failed")
    unmeasured = BudgetLine(file="t/a.py", suite=SUITE, est_time=1, status="failed")
    assert sorted([unmeasured, measured], key=sort_key) == [measured, unmeasured]
    by_suite = [
        BudgetLine(file="t/a.py", suite=s, est_time=1, ratio=0.5, status="ok") for s in "ba"
    ]
    assert [x.suite for x in sorted(by_suite, key=sort_key)] == ["a", "b"]


def test_registry_problems_come_first_and_only_for_files_in_the_results():
    scan = RegistryScan(
        registrations=[reg("t/a.py", 100)],
        errors=[Problem(file="t/a.py", message="e"), Problem(file="t/z.py", message="e")],
        warnings=[Problem(file="t/a.py", message="w"), Problem(file="t/z.py", message="w")],
    )
    report = build_report(scan, [run(res("t/a.py", 10), res("t/new.py", 10))], CONFIG)
    assert [(p.file, p.message) for p in report.problems] == [("t/a.py", "e")]
    assert [p.file for p in report.warnings] == ["t/a.py", "t/new.py"]
    listed = build_report(scan.registrations, [run(res("t/a.py", 10))], CONFIG, kind="static")
    assert listed.problems == [] and listed.warnings == [] and listed.kind == "static"


def test_result_without_suite_in_a_one_suite_run_takes_the_run_suite():
    regs = [reg("t/a.py", 300, OTHER), reg("t/a.py", 100)]
    report = build_report(regs, [run(res("t/a.py", 90, suite=None), suites=[SUITE])], CONFIG)
    (line,) = report.lines
    assert (line.suite, line.est_time, line.status) == (SUITE, 100, "near")
    assert report.notes == []


def test_small_budgets_still_give_a_ratio():
    (line,) = build_report([reg("t/a.py", 0.5)], [run(res("t/a.py", 0.3))], CONFIG).lines
    assert (line.ratio, line.status) == (pytest.approx(0.6), "ok")


def test_timeout_at_zero_seconds_without_a_limit_suggests_zero():
    (line,) = build_report([reg("t/a.py", 100)], [run(res("t/a.py", 0, "timeout"))], CONFIG).lines
    assert (line.status, line.suggestion) == ("timeout", 0)


def test_report_kind_defaults_to_run():
    assert build_report([], [], CONFIG).kind == "run"


def test_suite_totals_leave_unmeasured_files_out_of_the_measured_sum():
    files = [res("t/a.py", 50), res("t/b.py", 30, "not-run")]
    report = build_report([reg(f.path, 100) for f in files], [run(*files)], CONFIG)
    (total,) = report.suites
    assert (total.files, total.est_total, total.measured_total) == (2, 200, 50)


def test_timeout_under_a_budget_that_already_covers_it_suggests_nothing():
    result = res("t/a.py", 900, "timeout", timeout=900)
    (line,) = build_report([reg("t/a.py", 1000)], [run(result)], CONFIG).lines
    assert (line.status, line.suggestion) == ("timeout", None)
    assert "est_time" not in line.message
    assert line.message.endswith("900s; the real run time is unknown")


def test_the_report_carries_the_guard_tables_and_their_problems_as_given():
    rows = (ArchRow(file="t/a.py", line=3, case="kl"), ArchRow(file="t/a.py", line=4, case="x"))
    problem = Problem(file="t/a.py", line=3, message="no measured value")
    report = build_report([reg("t/a.py", 60)], [run(res("t/a.py", 30))], CONFIG,
                          arch_rows=iter(rows), arch_problems=[problem])  # fmt: skip
    assert report.arch_rows == list(rows)
    assert problem in report.problems


def test_attach_numbers_plans_each_line_and_names_the_files_below_their_p90():
    """Planned seconds and p90 per line; one note listing at most five files whose est_time is
    under their measured p90, then how many more."""
    from types import SimpleNamespace

    from ci_budget.budget.status import attach_numbers
    from ci_budget.models import BudgetLine, Report

    p90 = {f"t{i}.py": 20.0 for i in range(7)} | {"ok.py": 5.0, "none.py": None}

    class Numbers:
        history = SimpleNamespace(
            stats=lambda file, suite: SimpleNamespace(p90=p90[file], n=3 if p90[file] else 0)
        )

        @staticmethod
        def seconds(file, suite, est):
            return (est * 2, "model") if file != "ok.py" else (est, "est_time")

    names = [f"t{i}.py" for i in range(7)] + ["ok.py", "none.py"]
    report = Report(lines=[BudgetLine(file=f, suite="s", est_time=10.0) for f in names])
    attach_numbers(report, Numbers())
    first = report.lines[0]
    assert (first.planned, first.planned_from, first.p90, first.n) == (20.0, "model", 20.0, 3)
    ok = report.lines[7]
    assert (ok.planned, ok.planned_from, ok.p90, ok.n) == (10.0, "est_time", 5.0, 3)
    assert (report.lines[8].p90, report.lines[8].n) == (None, 0)
    assert report.notes == [
        "est_time below the measured p90 (history): "
        + ", ".join(f"t{i}.py (10s < p90 20s)" for i in range(5))
        + " and 2 more"
    ]
    # Without a history: planned seconds only, no p90 and no note.
    Numbers.history = None
    bare = Report(lines=[BudgetLine(file="t0.py", suite="s", est_time=10.0)])
    attach_numbers(bare, Numbers())
    assert (bare.lines[0].planned, bare.lines[0].p90, bare.notes) == (20.0, None, [])
    # est_time 0 is "no budget", never "below the p90".
    Numbers.history = SimpleNamespace(stats=lambda f, s: SimpleNamespace(p90=20.0, n=3))
    zero = Report(lines=[BudgetLine(file="t0.py", suite="s", est_time=0.0)])
    attach_numbers(zero, Numbers())
    assert zero.notes == []
