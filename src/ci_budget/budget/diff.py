"""The static budget report: the registry at the PR base against the working tree. Pure.

Registrations are matched by (file, backend, suite); within one (file, backend), a suite that
disappeared and one that appeared are a suite move. Suite totals are est_time; shard counts and
predicted shard walls use the seconds sglang's CI plans with (the partition model's est, else
the history's p90, else est_time; wall = coeff x Σ + bias), planned as the runner would
(`config.planner`). GPU cost counts enabled registrations only: est_time x the runner's GPUs.
A changed file whose est_time is below its measured p90 is `under_p90`: a budget the runs
already break.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field, computed_field

from ci_budget.budget.impact import SuiteImpact, pr_risk, runner_gpus, suite_impacts
from ci_budget.config import Config
from ci_budget.history.model import History, Stats, TrendPoint
from ci_budget.models import ArchRow, Problem, Registration, RegistryScan
from ci_budget.sharding.dispatch import PlanNumbers

RISK_ORDER = ("ok", "near", "over")
# where a changed file's measured p90 comes from: the history store (samples of `history add`,
# or of sglang-ci-stats runs read by `history add`), else sglang-ci-stats' model.json
MEASURED_FROM = ("ci-budget history", "sglang-ci-stats runs", "sglang-ci-stats model")


class Change(BaseModel):
    file: str
    backend: str
    line: int = 0  # registration line at head (base when removed)
    kinds: list[str] = Field(default_factory=list)
    # est_time, moved, disabled, enabled, added, new-file, removed, file-removed, unregistered
    suite_before: str | None = None
    suite_after: str | None = None
    est_before: float | None = None
    est_after: float | None = None
    disabled_before: str | None = None
    disabled_after: str | None = None
    gpu_seconds_delta: float | None = None  # None: a runner config with unknown GPUs
    planned: float | None = None  # the seconds its suite is planned on for it (head)
    planned_from: str | None = None  # model / p90 / estimate / est_time
    p90: float | None = None  # measured: p90 of the passing runs (history, else the model)
    n: int = 0  # passing runs measured (the model: the runs it was fitted on)
    measured_from: str | None = None  # MEASURED_FROM, or None: nothing measured it
    under_p90: bool = False  # est_time (head) below the measured p90

    @computed_field  # type: ignore[prop-decorator]  # in the report's JSON too
    @property
    def headroom(self) -> float | None:
        """The share of the new est_time above what the file measures (p90): 790 s over 655 s
        is 17 %; negative when the budget is below it."""
        if self.p90 is None or not self.est_after:
            return None
        return (self.est_after - self.p90) / self.est_after

    @property
    def delta(self) -> float:
        return (self.est_after or 0.0) - (self.est_before or 0.0)

    @property
    def delta_ratio(self) -> float | None:
        if self.est_before and self.est_after is not None:
            return self.delta / self.est_before
        return None


class UnderBudget(BaseModel):
    """A changed registration whose est_time is below what its passing runs measured (p90)."""

    file: str
    suite: str
    est_time: float
    p90: float
    n: int
    measured_from: str | None = None


class HistoryNote(BaseModel):
    file: str
    suite: str
    est_time: float | None = None
    stats: Stats
    trend: list[TrendPoint] = Field(default_factory=list)  # passing runs, oldest first


class StaticReport(BaseModel):
    kind: str = "budget"
    base_ref: str = ""
    base_commit: str = ""
    algorithm: str = "lpt"
    changes: list[Change] = Field(default_factory=list)
    suites: list[SuiteImpact] = Field(default_factory=list)
    errors_introduced: list[Problem] = Field(default_factory=list)
    history: list[HistoryNote] = Field(default_factory=list)
    arch_rows: list[ArchRow] = Field(default_factory=list)
    arch_rows_before: list[ArchRow] = Field(default_factory=list)  # the same files' at the base
    arch_problems: list[Problem] = Field(default_factory=list)
    est_delta: float = 0.0  # change of the enabled est_time over the affected suites
    gpu_seconds_delta: float = 0.0  # per future run, over suites with known GPU counts
    risk: str = "ok"  # the stage-timeout risk this PR causes (`verdict.pr_risk`)
    under_p90: list[UnderBudget] = Field(default_factory=list)  # est_time below measured p90
    predicted_from: str = "est_time"  # est_time / history / model / model+history
    notes: list[str] = Field(default_factory=list)


def _cost(reg: Registration | None, config: Config) -> float | None:
    if reg is None or not reg.enabled:
        return 0.0
    return None if (g := runner_gpus(reg, reg.suite, config)[1]) is None else reg.est_time * g


def _kinds(before: Registration | None, after: Registration | None) -> list[str]:
    kinds = []
    if before is not None and after is not None:
        if before.suite != after.suite:
            kinds.append("moved")
        if before.est_time != after.est_time:
            kinds.append("est_time")
        if before.enabled and not after.enabled:
            kinds.append("disabled")
        elif after.enabled and not before.enabled:
            kinds.append("enabled")
    return kinds


def _change(before: Registration | None, after: Registration | None, config: Config) -> Change:
    ref = after or before
    assert ref is not None
    kinds = _kinds(before, after)
    cost_before, cost_after = _cost(before, config), _cost(after, config)
    gpu = None if cost_before is None or cost_after is None else cost_after - cost_before
    return Change(
        file=ref.file,
        backend=ref.backend,
        line=ref.line,
        kinds=kinds,
        suite_before=before.suite if before else None,
        suite_after=after.suite if after else None,
        est_before=before.est_time if before else None,
        est_after=after.est_time if after else None,
        disabled_before=before.disabled if before else None,
        disabled_after=after.disabled if after else None,
        gpu_seconds_delta=gpu,
    )


def diff_registrations(
    base: Sequence[Registration],
    head: Sequence[Registration],
    base_files: set[str],
    head_files: set[str],
    config: Config,
) -> list[Change]:
    groups: dict[tuple[str, str], tuple[list, list]] = defaultdict(lambda: ([], []))
    for reg in base:
        groups[(reg.file, reg.backend)][0].append(reg)
    for reg in head:
        groups[(reg.file, reg.backend)][1].append(reg)
    head_registered = {r.file for r in head}
    changes = []
    for (file, _backend), (olds, news) in sorted(groups.items()):
        olds = sorted(olds, key=lambda r: (r.suite, r.line))
        news = sorted(news, key=lambda r: (r.suite, r.line))
        unmatched_new = list(news)
        left_old = []
        for old in olds:
            same = next((n for n in unmatched_new if n.suite == old.suite), None)
            if same is None:
                left_old.append(old)
                continue
            unmatched_new.remove(same)
            if _kinds(old, same):  # an unchanged registration (nearly all of them) costs nothing
                changes.append(_change(old, same, config))
        for old, new in zip(left_old, unmatched_new, strict=False):  # suite moves
            changes.append(_change(old, new, config))
        for old in left_old[len(unmatched_new) :]:
            change = _change(old, None, config)
            if file not in head_files:
                change.kinds.append("file-removed")
            elif file not in head_registered:
                change.kinds.append("unregistered")
            else:
                change.kinds.append("removed")
            changes.append(change)
        for new in unmatched_new[len(left_old) :]:
            change = _change(None, new, config)
            change.kinds.append("new-file" if file not in base_files else "added")
            changes.append(change)
    return changes


def introduced_errors(base: Iterable[Problem], head: Iterable[Problem]) -> list[Problem]:
    """Head errors not at base, by (file, message): a line shift is not a new error."""
    seen = Counter((p.file, p.message) for p in base)
    out = []
    for problem in head:
        key = (problem.file, problem.message)
        if seen[key]:
            seen[key] -= 1
        else:
            out.append(problem)
    return out


def build_static(
    base: RegistryScan,
    head: RegistryScan,
    base_files: set[str],
    head_files: set[str],
    config: Config,
    base_ref: str = "",
    base_commit: str = "",
    history: History | None = None,
    arch_rows: Sequence[ArchRow] = (),
    arch_problems: Sequence[Problem] = (),
    extra_notes: Sequence[str] = (),
    numbers: PlanNumbers | None = None,
) -> StaticReport:
    numbers = numbers or PlanNumbers(history=history)
    history = numbers.history
    changes = diff_registrations(
        base.registrations, head.registrations, base_files, head_files, config
    )
    keys = {(c.backend, s) for c in changes for s in (c.suite_before, c.suite_after) if s}
    suites = suite_impacts(base.registrations, head.registrations, keys, config, numbers)
    _measure(changes, numbers)
    notes = _history_notes(changes, history) if history is not None else []
    risk = max((pr_risk(s) for s in suites), key=RISK_ORDER.index, default="ok")
    unknown = sorted({s.suite for s in suites if s.gpus is None})
    report_notes = []
    if unknown:
        report_notes.append("GPU count unknown (no runner config) for: " + ", ".join(unknown))
    return StaticReport(
        base_ref=base_ref,
        base_commit=base_commit,
        algorithm=config.planner.algorithm,
        changes=changes,
        suites=suites,
        errors_introduced=introduced_errors(base.errors, head.errors),
        history=notes,
        arch_rows=[r for r in arch_rows if r.flags],
        est_delta=sum(s.delta for s in suites),
        gpu_seconds_delta=sum(s.gpu_seconds_delta or 0.0 for s in suites),
        risk=risk,
        under_p90=[
            UnderBudget(
                file=c.file,
                suite=c.suite_after or "",
                est_time=c.est_after or 0.0,
                p90=c.p90 or 0.0,
                n=c.n,
                measured_from=c.measured_from,
            )
            for c in changes
            if c.under_p90
        ],  # fmt: skip
        predicted_from=_predicted_from(numbers),
        notes=report_notes + list(extra_notes),
        arch_problems=list(arch_problems),
    )


def _measure(changes: list[Change], numbers: PlanNumbers) -> None:
    """Each changed registration at head: the seconds it is planned on, what was measured."""
    for c in changes:
        if c.suite_after is None or c.est_after is None:
            continue
        c.planned, c.planned_from = numbers.seconds(c.file, c.suite_after, c.est_after)
        if numbers.history is not None:
            stats = numbers.history.stats(c.file, c.suite_after)
            if stats.p90 is not None:
                c.p90, c.n = stats.p90, stats.n
                c.measured_from = _history_source(numbers.history, c.file, c.suite_after)
        model = numbers.model
        if c.p90 is None and model is not None:
            if (seconds := model.seconds(c.file, c.suite_after)) is not None:
                # sglang-ci-stats' est is the p90 of the file's passing runs on main
                c.p90, c.n, c.measured_from = seconds, model.n_runs or 0, MEASURED_FROM[2]
        c.under_p90 = c.p90 is not None and c.est_after < c.p90


def _history_source(history: History, file: str, suite: str) -> str:
    """Samples imported from sglang-ci-stats runs carry a `ci-stats:` run key."""
    runs = [s.run for s in history.samples(file, suite)]
    imported = sum(r.startswith("ci-stats:") for r in runs)
    if imported == len(runs):
        return MEASURED_FROM[1]
    return MEASURED_FROM[0] if not imported else " + ".join(MEASURED_FROM[:2])


def _history_notes(changes: list[Change], history: History) -> list[HistoryNote]:
    notes = []
    for c in changes:
        suite = c.suite_after or c.suite_before
        if suite is None:
            continue
        stats = history.stats(c.file, suite)
        if stats.runs:
            notes.append(
                HistoryNote(
                    file=c.file,
                    suite=suite,
                    est_time=c.est_after,
                    stats=stats,
                    trend=history.trend(c.file, suite),
                )  # fmt: skip
            )
    return notes


def _predicted_from(numbers: PlanNumbers) -> str:
    parts = [name for name, on in (("model", numbers.model), ("history", numbers.history)) if on]
    return "+".join(parts) or "est_time"
