"""How a suite is sized into shards, as sglang's CI sizes it. Pure.

The seconds a plan is sized and split with (the partition model, measured history, est_time),
then which suites a gating label runs and in how many shards, as sglang's
`compute_partitions.py` decides.

The model's format is sglang-ci-stats' `model.json`:

    {"est": {SUITE: {PATH: seconds}}, "fit": {SUITE: {"coeff": c, "bias": b}}, ...}

sglang predicts a shard's wall as coeff x Σ seconds + bias (each shard pays the bias once);
`PlanNumbers.shard_wall` predicts it from measured history first (two questions kept apart:
the seconds a plan is sized and split on are sglang's; the wall it will take is the best
estimate). Every part falls back on its own, as sglang's CI does: a file without `est` weighs
what the history measured (p90 of passing runs), else its est_time; a suite without a fit, or whose
coeff is not positive (regression noise), gets coeff 1, bias 0. An entry of the wrong shape is
left out with one line saying so, and falls back like a missing one.

A gating label dispatches per-commit registrations only (enabled, not nightly, of the dispatched
backends), shard counts from each suite's own timeout, pinned counts where configured, and a
`max_parallel` per suite that rations scarce GPU runners.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ci_budget.config import Config
from ci_budget.models import Registration, secs
from ci_budget.sharding.select import min_shards

if TYPE_CHECKING:  # pragma: no cover
    from ci_budget.history.model import History


NO_FIT = (1.0, 0.0)
RECENT_WINDOW = 5  # a file's typical time is the p50 of its newest this many passing runs,
ENOUGH_PASSING = 2  # once it has this many; else the model's est (backtest-tuned: performance.md)
SOURCES = ("model", "p90", "est_time")  # where a file's planned seconds came from


@dataclass
class PartitionModel:
    est: dict[str, dict[str, float]] = field(default_factory=dict)  # suite -> path -> s
    fit: dict[str, tuple[float, float]] = field(default_factory=dict)  # suite -> (coeff, bias)
    raw_est: dict[str, dict[str, int | float]] = field(default_factory=dict)  # as written
    source: str = ""  # the file it was read from, for messages
    fit_window_start: str | None = None
    n_runs: int | None = None

    def weights(self) -> dict[tuple[str, str], float]:
        """(path, suite) -> seconds, the shape the planners take."""
        return {(path, suite): s for suite, files in self.est.items() for path, s in files.items()}

    def seconds(self, path: str, suite: str) -> float | None:
        return self.est.get(suite, {}).get(path)

    def coeff_bias(self, suite: str) -> tuple[float, float]:
        return self.fit.get(suite, NO_FIT)

    def covers(self, suite: str) -> bool:
        return suite in self.est or suite in self.fit


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def parse_model(data: Any, where: str = "model") -> tuple[PartitionModel | None, list[str]]:
    """The model in `data` (parsed JSON) and one line per part that is not usable. None (with
    a line) when `data` is not a model at all: then every suite plans on est_time."""
    if not isinstance(data, dict):
        return None, [f"{where}: not a JSON object; planning on est_time"]
    model = PartitionModel(source=where)
    problems: list[str] = []
    est = data.get("est", {})
    if not isinstance(est, dict):
        problems.append(f"{where}: est is not an object of suite -> {{file: seconds}}; ignored")
        est = {}
    for suite, files in est.items():
        if not isinstance(files, dict):
            problems.append(f"{where}: est.{suite} is not an object of file -> seconds; ignored")
            continue
        bad = [p for p, v in files.items() if (s := _number(v)) is None or s < 0]
        if bad:
            problems.append(
                f"{where}: est.{suite}: {len(bad)} value(s) not a number of seconds "
                f"(first: {bad[0]}); those files use est_time"
            )
        good = {p: v for p, v in files.items() if p not in set(bad)}
        if good:
            model.raw_est[suite] = good
            model.est[suite] = {p: float(v) for p, v in good.items()}
    _read_fits(data.get("fit", {}), where, model, problems)
    start, runs = data.get("fit_window_start"), data.get("n_runs")
    model.fit_window_start = start if isinstance(start, str) else None
    model.n_runs = runs if isinstance(runs, int) and not isinstance(runs, bool) else None
    return model, problems


def _read_fits(fit: Any, where: str, model: PartitionModel, problems: list[str]) -> None:
    if not isinstance(fit, dict):
        problems.append(f"{where}: fit is not an object of suite -> {{coeff, bias}}; ignored")
        return
    for suite, entry in fit.items():
        if not isinstance(entry, dict):
            problems.append(f"{where}: fit.{suite} is not an object; coeff 1, bias 0")
            continue
        coeff, bias = _number(entry.get("coeff", 1.0)), _number(entry.get("bias", 0.0))
        if coeff is None or bias is None:
            problems.append(f"{where}: fit.{suite}: coeff/bias not numbers; coeff 1, bias 0")
        elif coeff <= 0:
            # sglang's rule: more work cannot take less time, so the fit is noise
            problems.append(
                f"{where}: fit.{suite}: coeff {coeff:g} is not positive; coeff 1, bias 0"
            )
        else:
            model.fit[suite] = (coeff, bias)


@dataclass
class PlanNumbers:
    """What plans are sized and split with: per file the model's est, else the history's p90
    of passing runs, else est_time; per suite the model's fit."""

    model: PartitionModel | None = None
    history: History | None = None
    window: int = RECENT_WINDOW
    enough: int = ENOUGH_PASSING

    def seconds(self, path: str, suite: str, est_time: float) -> tuple[float, str]:
        if self.model is not None and (s := self.model.seconds(path, suite)) is not None:
            return s, "model"
        if self.history is not None:
            p90 = self.history.stats(path, suite).p90
            if p90 is not None:
                return float(p90), "p90"
        return float(est_time), "est_time"

    def weights(self, registrations: Iterable[Registration]) -> dict[tuple[str, str], float]:
        """(file, suite) -> measured seconds (model or p90) where known. A
        registration with none weighs its own est_time: a file registered for two backends (or
        twice) in one suite has one est_time per registration, and sglang's `auto_partition`
        weighs each by its own, so no (file, suite) entry may stand for them all."""
        out = {}
        for r in registrations:
            seconds, source = self.seconds(r.file, r.suite, r.est_time)
            if source != "est_time":
                out[(r.file, r.suite)] = seconds
        return out

    def coeff_bias(self, suite: str) -> tuple[float, float]:
        return self.model.coeff_bias(suite) if self.model is not None else NO_FIT

    def wall(self, suite: str, seconds: float) -> float:
        """sglang's predicted shard wall: coeff x Σ seconds + bias (1 and 0 without a fit)."""
        coeff, bias = self.coeff_bias(suite)
        return coeff * seconds + bias

    def typical(self, path: str, suite: str, est_time: float) -> tuple[float, str]:
        """A file's best estimate of its next time, for predicted walls (never for counts):
        the p50 of its newest `window` passing runs where it has at least `enough`, else
        the model's est (a p90 over sglang's fit window), else the little history there is
        (p50 of fewer runs), est_time last."""
        recent, n = (None, 0)
        if self.history is not None:
            recent, n = self.history.recent(path, suite, self.window)
        if recent is not None and n >= self.enough:
            return float(recent), "recent"
        if self.model is not None and (s := self.model.seconds(path, suite)) is not None:
            return s, "model"
        if recent is not None:
            return float(recent), "recent"
        return self.seconds(path, suite, est_time)

    def shard_wall(self, suite: str, files: Iterable[tuple[str, float]]) -> float:
        """A shard's predicted wall from its (file, est_time) list: Σ of each file's
        `typical` seconds + the suite's overhead, learned from its job walls (the median of
        wall - Σ elapsed) where the history has them, else the model's fit (coeff x Σ + bias),
        else nothing. A model only fills in what the history lacks, so a prediction given one
        is never worse than the history's where the history has enough (a mean with sglang's own
        prediction was better on some runs and worse on others). The rule the walk-forward
        backtest on sglang's runs checks (docs/performance.md)."""
        files = list(files)
        total = math.fsum(self.typical(f, suite, e)[0] for f, e in files)
        overhead = self.history.overhead(suite) if self.history is not None else None
        if overhead is None:
            return self.wall(suite, total)
        return total + overhead

    @property
    def empty(self) -> bool:
        return self.model is None and self.history is None


def uncovered(model: PartitionModel | None, suites: Iterable[str]) -> list[str]:
    """The suites a model says nothing about (their files plan on est_time, coeff 1, bias 0)."""
    if model is None:
        return []
    return sorted({s for s in suites if not model.covers(s)})


# ---- dispatch: the shards a gating label starts ----


@dataclass
class SuiteShards:
    suite: str
    size: int
    max_parallel: int
    runner_config: str | None
    runs_on: list[str]
    backend: str | None  # None when two dispatched backends share the suite
    files: int
    total: float  # Σ seconds the count was sized on
    timeout_s: float
    note: str | None = None


def matches(reg: Registration, patterns: Sequence[str] | None) -> bool:
    """A gating label's entries name stages, suites, or suite glob patterns (None: all)."""
    if patterns is None:
        return True
    return any(reg.stage == p or fnmatch.fnmatchcase(reg.suite, p) for p in patterns)


def per_commit(
    registrations: Sequence[Registration], config: Config, patterns: Sequence[str] | None = None
) -> dict[str, list[Registration]]:
    """suite -> its enabled, non-nightly registrations of the dispatched backends."""
    backends = set(config.github.backends)
    out: dict[str, list[Registration]] = {}
    for r in registrations:
        if r.enabled and not r.nightly and r.backend in backends and matches(r, patterns):
            out.setdefault(r.suite, []).append(r)
    return out


def _sglang_size(suite, count, total, timeout_s, config, model) -> tuple[int, str | None]:
    """ceil(coeff x Σ / (safety x T - bias)): each shard pays the fit's bias once."""
    coeff, bias = model.coeff_bias(suite) if model is not None else (1.0, 0.0)
    budget = config.planner.safety * timeout_s - bias
    if budget <= 0:
        return count, f"{suite}: fit bias {secs(bias)} leaves no shard budget; one file a shard"
    ideal = math.ceil(coeff * total / budget)
    if ideal > count:
        return count, (
            f"{suite}: needs {ideal} shards for {count} file(s) (a file alone exceeds the "
            f"{secs(budget)} shard budget); one file a shard"
        )
    return max(1, ideal), None


def suite_shards(
    suite: str,
    regs: Sequence[Registration],
    config: Config,
    weights: Mapping[tuple[str, str], float] | None = None,
    model: PartitionModel | None = None,
) -> SuiteShards:
    weights = weights or {}
    seconds = [weights.get((r.file, r.suite), r.est_time) for r in regs]
    total = 0.0
    for s in seconds:  # summed in order, as sglang sums
        total += s
    name = config.suite_runner(suite) or regs[0].runner_config
    runner = config.runner(name)
    timeout = config.suite_timeout_s(suite, regs[0].stage)
    note = None
    fixed = config.fixed_shards(suite)
    if fixed is not None:
        size, parallel = fixed, fixed
    else:
        if config.planner.shard_rule == "sglang":
            size, note = _sglang_size(suite, len(regs), total, timeout, config, model)
        else:
            items = [(r.file, s) for r, s in zip(regs, seconds, strict=True)]
            p = config.planner
            size = min_shards(items, timeout, p.safety, p.max_shards)
        parallel = config.max_parallel_for(size, runner.gpus if runner else 1)
    backends = sorted({r.backend for r in regs})
    return SuiteShards(
        suite=suite,
        size=size,
        max_parallel=parallel,
        runner_config=name,
        runs_on=list(runner.runs_on) if runner else [],
        backend=backends[0] if len(backends) == 1 else None,
        files=len(regs),
        total=total,
        timeout_s=timeout,
        note=note,
    )


def dispatch(
    registrations: Sequence[Registration],
    config: Config,
    patterns: Sequence[str] | None = None,
    weights: Mapping[tuple[str, str], float] | None = None,
    model: PartitionModel | None = None,
) -> tuple[list[SuiteShards], list[str]]:
    """The suites `patterns` select, sharded, by suite name; and notes on those that cannot run."""
    out, notes = [], []
    for suite, regs in sorted(per_commit(registrations, config, patterns).items()):
        plan = suite_shards(suite, regs, config, weights, model)
        if plan.runner_config is None:
            notes.append(f"suite '{suite}' has no runner_config; skipped")
            continue
        if not plan.runs_on:
            notes.append(
                f"suite '{suite}': runner config '{plan.runner_config}' is not configured; skipped"
            )
            continue
        if plan.note:
            notes.append(plan.note)
        out.append(plan)
    return out, notes
