"""The partition model, and the one rule for the seconds a plan is sized and split with. Pure.

The model's format is sglang-ci-stats' `model.json`:

    {"est": {SUITE: {PATH: seconds}}, "fit": {SUITE: {"coeff": c, "bias": b}}, ...}

sglang predicts a shard's wall as coeff x Σ seconds + bias (each shard pays the bias once);
`PlanNumbers.shard_wall` predicts it from measured history first (two questions kept apart:
the seconds a plan is sized and split on are sglang's; the wall it will take is the best
estimate). Every part falls back on its own, as sglang's CI does: a file without `est` weighs
what the history measured (p90 of passing runs), else its est_time; a suite without a fit, or whose
coeff is not positive (regression noise), gets coeff 1, bias 0. An entry of the wrong shape is
left out with one line saying so, and falls back like a missing one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ci_budget.history.model import History
    from ci_budget.models import Registration

NO_FIT = (1.0, 0.0)
RECENT_WINDOW = 3  # a file's typical time is the p50 of its newest this many passing runs,
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
    blend: bool = True  # with the model's fit and job walls: the mean of both predictions

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
        else nothing. Given a model with a fit for the suite as well as job walls, the mean of
        that and sglang's own prediction (coeff x Σ planned seconds + bias): the model's p90s
        see the slowest of several noisy shards, the history sees the newest runs. The rule the
        walk-forward backtest on sglang's runs checks (docs/performance.md)."""
        files = list(files)
        total = math.fsum(self.typical(f, suite, e)[0] for f, e in files)
        overhead = self.history.overhead(suite) if self.history is not None else None
        if overhead is None:
            return self.wall(suite, total)
        if self.blend and self.model is not None and suite in self.model.fit:
            planned = math.fsum(self.seconds(f, suite, e)[0] for f, e in files)
            return (total + overhead + self.wall(suite, planned)) / 2
        return total + overhead

    @property
    def empty(self) -> bool:
        return self.model is None and self.history is None


def uncovered(model: PartitionModel | None, suites: Iterable[str]) -> list[str]:
    """The suites a model says nothing about (their files plan on est_time, coeff 1, bias 0)."""
    if model is None:
        return []
    return sorted({s for s in suites if not model.covers(s)})
