"""One verdict per report: the worst thing a PR's author has to act on. Pure.

A finding is `fail` (a file timed out or failed, a stage goes over its timeout because of this
PR, a registry error the PR introduced) or `warn` (a file over budget, measured or by a new
est_time below the measured p90; a stage near its timeout because of this PR; a guard-table row
unverified or silent on the architecture CI runs). The verdict is the worst level found, and
its findings come worst first: that is what the headline names.

What is true but not the PR's doing is `context`: a suite that was near or over its timeout
before the PR and is not made worse, guard rows the base already had flagged the same way,
files near their budget. The report says it, below the headline, without changing the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ci_budget.arch.docstrings import NO_COLUMN, SILENT, UNVERIFIED
from ci_budget.models import ArchRow, Report, secs

if TYPE_CHECKING:  # a run report needs neither the static report nor history
    from ci_budget.budget.diff import HistoryNote, StaticReport
    from ci_budget.budget.impact import SuiteImpact

LEVELS = ("ok", "warn", "fail")
# Worst first: the order findings are named in.
KINDS = (
    "timeout",  # files that timed out
    "failed",  # files that failed or crashed
    "stage-over",  # a stage predicted over its timeout because of this PR
    "registry-error",  # registry errors the PR introduced
    "elsewhere",  # results of another commit or repository than the checkout's budgets
    "nothing-ran",  # a results file in which no file ran
    "over",  # files measured over budget
    "flaky",  # files that passed only on a retry
    "below-p90",  # a new est_time below the file's measured p90
    "stage-near",  # a stage predicted near its timeout because of this PR
    "unverified",  # guard rows never shown to fire on the CI arch
    "silent",  # guard rows that read 0 on the CI arch where another arch fires
)
LEVEL = {k: "fail" for k in KINDS[:4]} | {k: "warn" for k in KINDS[4:]}
# Context, in the order it is told.
CONTEXT_KINDS = ("stage-over", "stage-near", "unverified", "silent", "near")
GUARD_FLAGS = {UNVERIFIED: "unverified", NO_COLUMN: "unverified", SILENT: "silent"}


class Finding(BaseModel):
    kind: str
    count: int
    names: list[str] = Field(default_factory=list)  # what it is about: files, suites, rows
    arch: str | None = None  # guard rows: the CI architecture
    detail: list[str] = Field(default_factory=list)  # one per name, e.g. "1,845s of 30 min"

    @property
    def level(self) -> str:
        return LEVEL[self.kind]


class Verdict(BaseModel):
    level: str = "ok"
    findings: list[Finding] = Field(default_factory=list)  # worst first
    context: list[Finding] = Field(default_factory=list)


def verdict_of(findings: Iterable[Finding], context: Iterable[Finding] = ()) -> Verdict:
    found = sorted((f for f in findings if f.count), key=lambda f: KINDS.index(f.kind))
    level = max((f.level for f in found), key=LEVELS.index, default="ok")
    told = sorted((f for f in context if f.count), key=lambda f: CONTEXT_KINDS.index(f.kind))
    return Verdict(level=level, findings=found, context=told)


def _guard_findings(rows: Iterable[ArchRow]) -> list[Finding]:
    """One finding per (kind, CI arch): rows unverified (or without a column) or silent there."""
    out: dict[tuple[str, str | None], Finding] = {}
    for row in rows:
        kinds = {GUARD_FLAGS[f] for f in row.flags if f in GUARD_FLAGS}
        for kind in sorted(kinds, key=KINDS.index):
            finding = out.setdefault((kind, row.ci_arch), Finding(kind=kind, count=0))
            finding.arch = row.ci_arch
            finding.count += 1
            finding.names.append(row.case)
    return list(out.values())


# ---- the run report ----


def run_verdict(report: Report) -> Verdict:
    """Timeouts, failures and files over budget, guard rows flagged for the run's arch, results
    of another checkout, and a run in which nothing ran. A run has no base: a stage's time is
    not judged here (the static report does that)."""
    by_status: dict[str, list[str]] = {}
    for line in report.lines:  # worst first already
        by_status.setdefault(line.status, []).append(line.file)
    findings = [
        Finding(kind=kind, count=len(files), names=files)
        for kind, files in (
            (k, by_status.get(k, [])) for k in ("timeout", "failed", "over", "flaky")
        )
    ]
    findings += _guard_findings(report.arch_rows)
    findings.append(Finding(kind="elsewhere", count=len(report.elsewhere), detail=report.elsewhere))
    idle = sum(len(by_status.get(s, [])) for s in ("not-run", "cancelled"))
    # Not one file ran: never "nothing to act on". No results file at all (`report
    # --allow-empty` where no job ran) is no finding: the headline says no job left results.
    if report.meta and idle == len(report.lines):
        told = (
            f"{idle:,} file{'s' if idle != 1 else ''} not run" if idle else "no file in the results"
        )
        findings.append(Finding(kind="nothing-ran", count=1, detail=[told]))
    near = by_status.get("near", [])
    return verdict_of(findings, [Finding(kind="near", count=len(near), names=near)])


# ---- the static report ----


def below_p90(note: HistoryNote) -> bool:
    """The est_time the PR sets is below what the file measured (p90 of its passing runs)."""
    p90 = note.stats.p90
    return note.est_time is not None and p90 is not None and note.est_time < p90


def _row_key(row: ArchRow, flag: str) -> tuple:
    return (row.file, row.group, row.case, row.ci_arch, flag)


def new_flags(rows: Iterable[ArchRow], before: Iterable[ArchRow]) -> tuple[list, list]:
    """(rows with a flag the base did not have, rows flagged exactly as at the base)."""
    known = {_row_key(r, f) for r in before for f in r.flags}
    new, old = [], []
    for row in rows:
        fresh = [f for f in row.flags if _row_key(row, f) not in known]
        if fresh:
            new.append(row.model_copy(update={"flags": fresh}))
        elif row.flags:
            old.append(row)
    return new, old


def _stage(kind: str, suites: list[SuiteImpact]) -> Finding:
    ordered = sorted(suites, key=lambda s: -s.makespan_after / (s.timeout_s or 1))
    return Finding(
        kind=kind,
        count=len(ordered),
        names=[s.suite for s in ordered],
        detail=[f"{secs(s.makespan_after)} of {s.timeout_s / 60:g} min" for s in ordered],
    )


def static_verdict(report: StaticReport) -> Verdict:
    from ci_budget.budget.impact import pr_risk

    timed = [s for s in report.suites if s.timeout_s > 0]
    ours = {risk: [s for s in timed if pr_risk(s) == risk] for risk in ("over", "near")}
    theirs = {
        risk: [s for s in timed if s.risk == risk and pr_risk(s) != risk]
        for risk in ("over", "near")
    }
    low = report.under_p90  # history, else the model: below what the file measures
    new_rows, old_rows = new_flags(report.arch_rows, report.arch_rows_before)
    findings = [
        _stage("stage-over", ours["over"]),
        _stage("stage-near", ours["near"]),
        Finding(
            kind="registry-error",
            count=len(report.errors_introduced),
            names=[p.file for p in report.errors_introduced],
        ),
        Finding(
            kind="below-p90",
            count=len(low),
            names=[n.file for n in low],
            detail=[f"{secs(n.est_time)} < p90 {secs(n.p90)}" for n in low],
        ),
        *_guard_findings(new_rows),
    ]
    context = [_stage("stage-over", theirs["over"]), _stage("stage-near", theirs["near"])]
    return verdict_of(findings, context + _guard_findings(old_rows))


# ---- what makes a comment worth creating (--comment-mode changes) ----


def run_news(report: Report) -> bool:
    """A run report is news when it has a finding: a run whose files all kept their budget,
    or where nothing ran, creates no comment (an existing one is still updated, and its
    headline says that nothing ran)."""
    return any(f.kind != "nothing-ran" for f in run_verdict(report).findings)


def static_news(report: StaticReport) -> bool:
    """The static report is news when the PR changes what ci-budget watches (a registration,
    an est_time, a guard-table row's flags, a suite's shard count) or a finding exists."""
    shards = any(s.shards_before != s.shards_after for s in report.suites)
    rows = new_flags(report.arch_rows, report.arch_rows_before)[0]
    changed = bool(report.changes or report.errors_introduced or rows or shards)
    return changed or bool(static_verdict(report).findings)
