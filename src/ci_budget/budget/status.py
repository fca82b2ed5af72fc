"""Measured time vs `est_time`: one `BudgetLine` per (file, suite), suite totals, a `Report`.

Pure: takes registrations and run results, returns data. Rendering lives in `render`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ci_budget.budget.suggest import proposal
from ci_budget.config import Config
from ci_budget.models import (
    ArchRow,
    BudgetLine,
    FileResult,
    Problem,
    Registration,
    RegistryScan,
    Report,
    RunMeta,
    RunResults,
    SuiteTotal,
    secs,
)

# Worst first; also the order of the report's tables.
# `cancelled`: someone stopped the run (SIGINT/SIGTERM); it says nothing about the budget.
# `flaky`: passed only on a retry (`run --enable-retry`); its measured time is every attempt's.
STATUS_ORDER = (
    "timeout", "over", "failed", "flaky", "near", "stale", "ok", "cancelled", "not-run"
)  # fmt: skip
_RANK = {s: i for i, s in enumerate(STATUS_ORDER)}
ATTENTION = STATUS_ORDER[: _RANK["near"]]  # timed out, over, failed or flaky: never cut
WORTH_A_WORD = STATUS_ORDER[: _RANK["near"] + 1]  # what `worst_status` reports; else "ok"
SUGGEST_FOR = ("over", "near", "stale")  # and timeouts, with their limit as a lower bound
UNREGISTERED = "(unregistered)"


def budget_status(file_status: str, ratio: float | None, config: Config) -> str:
    t = config.thresholds
    if file_status == "timeout":
        return "timeout"
    if file_status in ("failed", "crashed"):
        return "failed"
    if file_status == "cancelled":
        return "cancelled"
    if file_status == "not-run" or ratio is None:
        return "not-run"
    if ratio > t.over:
        return "over"
    if ratio > t.near:
        return "near"
    if ratio < t.stale:
        return "stale"
    return "ok"


def pick(old: FileResult, new: FileResult) -> FileResult:
    """Two results for the same (file, suite), e.g. a retried shard: a run beats a not-run,
    otherwise the later one wins."""
    if new.status == "not-run" and old.status != "not-run":
        return old
    return new


def _registrations(registrations: RegistryScan | Iterable[Registration]) -> list[Registration]:
    if isinstance(registrations, RegistryScan):
        return list(registrations.registrations)
    return list(registrations)


def _gpus(reg: Registration | None, meta: RunMeta, config: Config) -> int:
    runner = None
    if reg is not None:
        runner = config.runner(reg.runner_config)
    if runner is None:
        runner = config.runner(meta.runner_config)
    if runner is not None:
        return runner.gpus
    if meta.gpu is not None:
        return meta.gpu.count
    return 0 if reg is not None and reg.backend == "cpu" else 1


def _result_suite(result: FileResult, meta: RunMeta) -> str | None:
    if result.suite:
        return result.suite
    if len(meta.suites) == 1:
        return meta.suites[0]
    return None


class _Join:
    """Results joined to registrations, with problems noted on the way."""

    def __init__(self, regs: list[Registration]):
        self.by_key = {(r.file, r.suite): r for r in regs}
        self.by_file: dict[str, list[Registration]] = {}
        for r in regs:
            self.by_file.setdefault(r.file, []).append(r)
        self.warnings: list[Problem] = []
        self.notes: list[str] = []

    def find(self, result: FileResult, suite: str | None) -> Registration | None:
        if suite is not None and (result.path, suite) in self.by_key:
            return self.by_key[(result.path, suite)]
        candidates = self.by_file.get(result.path)
        if not candidates:
            self.warnings.append(
                Problem(
                    file=result.path,
                    message="has results but no registration (add a top-level "
                    "register_*_ci(...) call); shown with its measured time only",
                )
            )
            return None
        reg = max(candidates, key=lambda r: (r.est_time, r.suite))
        if suite is not None:
            self.notes.append(
                f"{result.path} ran in suite {suite}, which it does not register; "
                f"compared with its {reg.suite} budget ({secs(reg.est_time)})"
            )
        return reg


def budget_line(
    result: FileResult, reg: Registration | None, suite: str, gpus: int, config: Config
) -> BudgetLine:
    est = reg.est_time if reg is not None else (result.est_time or 0.0)
    measured = None if result.status == "not-run" else spent(result)
    ratio = measured / est if measured is not None and est > 0 else None
    # A registered est_time=0 that ran is over by any measured time (the ratio itself has no
    # value to show); it ran, so it is never `not-run`.
    zero = reg is not None and est == 0 and measured is not None
    status = budget_status(result.status, math.inf if zero and measured else ratio, config)
    if zero and not measured and status == "not-run":
        status = "ok"
    if reg is None and status == "not-run" and measured is not None:
        status = "ok"
    message = result.message
    suggestion = None
    if status == "timeout" and measured is not None:
        floor = max(measured, result.timeout or 0.0)
        suggestion = proposal(est, floor, config.thresholds)
        note = "the real run time is unknown"
        if suggestion:
            note = f"est_time={suggestion} is a lower bound ({note})"
        if not (message and message.startswith("timed out")):  # the runner's says it
            note = f"timed out after {secs(floor)}; {note}"
        message = f"{message}; {note}" if message else note
    elif measured is not None and (
        status in SUGGEST_FOR or (reg is None and result.status == "passed")
    ):
        suggestion = proposal(est, measured, config.thresholds)
    if result.status == "passed" and len(result.attempts) > 1 and status != "not-run":
        status = "flaky"
    return BudgetLine(
        file=result.path,
        suite=suite,
        line=reg.line if reg is not None else 0,
        est_time=est,
        measured=measured,
        ratio=ratio,
        headroom=est - measured if measured is not None else None,
        status=status,
        suggestion=suggestion,
        file_status=result.status,
        in_flight=result.in_flight,
        classes=result.classes,
        unattributed=result.unattributed,
        gpus=gpus,
        gpu_seconds=(measured or 0.0) * gpus,
        message=message,
        attempts=result.attempts,
    )


def spent(result: FileResult) -> float:
    """The seconds the job spent on the file: every attempt's, when it ran more than once."""
    return math.fsum(a.elapsed for a in result.attempts) if result.attempts else result.elapsed


def sort_key(line: BudgetLine) -> tuple:
    ratio = line.ratio if line.ratio is not None else -math.inf
    return (_RANK[line.status], -ratio, line.file, line.suite)


def suite_totals(lines: Iterable[BudgetLine]) -> list[SuiteTotal]:
    totals: dict[str, SuiteTotal] = {}
    for line in lines:
        t = totals.setdefault(line.suite, SuiteTotal(suite=line.suite))
        t.files += 1
        t.est_total += line.est_time
        t.measured_total += line.measured or 0.0
        t.over += line.status == "over"
        t.near += line.status == "near"
        t.timeouts += line.status == "timeout"
        t.failed += line.status == "failed"
        t.gpu_seconds += line.gpu_seconds
    return [totals[k] for k in sorted(totals)]


def build_report(
    registrations: RegistryScan | Iterable[Registration],
    results: list[RunResults],
    config: Config,
    kind: str = "run",
    *,
    arch_rows: Iterable[ArchRow] = (),
    arch_problems: Iterable[Problem] = (),
) -> Report:
    """Join results to registrations by (path, suite). Shards of one suite simply add up.
    `arch_rows`/`arch_problems`: the guard tables of the reported files, checked by the caller."""
    join = _Join(_registrations(registrations))
    chosen: dict[tuple[str, str], tuple[FileResult, Registration | None, RunMeta]] = {}
    for run in results:
        for result in run.files:
            suite = _result_suite(result, run.meta)
            reg = join.find(result, suite)
            key_suite = suite or (reg.suite if reg is not None else UNREGISTERED)
            key = (result.path, key_suite)
            if key in chosen:
                kept = pick(chosen[key][0], result)
                if kept is result:
                    chosen[key] = (result, reg, run.meta)
                join.notes.append(
                    f"{result.path} ({key_suite}) appears in more than one result file; "
                    f"kept the {kept.status} one"
                )
            else:
                chosen[key] = (result, reg, run.meta)
    lines = [
        budget_line(result, reg, suite, _gpus(reg, meta, config), config)
        for (_, suite), (result, reg, meta) in chosen.items()
    ]
    lines.sort(key=sort_key)
    files = {line.file for line in lines}
    report = Report(
        kind=kind,
        meta=[run.meta for run in results],
        lines=lines,
        suites=suite_totals(lines),
        warnings=join.warnings,
        notes=join.notes,
    )
    if isinstance(registrations, RegistryScan):
        report.problems = [p for p in registrations.errors if p.file in files]
        report.warnings = [p for p in registrations.warnings if p.file in files] + report.warnings
    report.arch_rows = list(arch_rows)
    report.problems.extend(arch_problems)
    return report


def worst_status(report: Report) -> str:
    """ok / near / over / timeout / failed: the one word a workflow branches on."""
    present = {line.status for line in report.lines}
    return next((s for s in WORTH_A_WORD if s in present), "ok")


def attach_numbers(report: Report, numbers) -> None:
    """Each line's planned seconds (`sharding.model.PlanNumbers`) and measured p90, and one
    note naming the files budgeted below what their passing runs took."""
    under = []
    for line in report.lines:
        line.planned, line.planned_from = numbers.seconds(line.file, line.suite, line.est_time)
        if numbers.history is not None:
            stats = numbers.history.stats(line.file, line.suite)
            line.p90, line.n = stats.p90, stats.n
            if stats.p90 is not None and line.est_time and line.est_time < stats.p90:
                under.append(f"{line.file} ({secs(line.est_time)} < p90 {secs(stats.p90)})")
    if under:
        shown = ", ".join(under[:5]) + (f" and {len(under) - 5} more" if len(under) > 5 else "")
        report.notes.append(f"est_time below the measured p90 (history): {shown}")
