"""Per-suite impact of a registry change: files, est_time, shard counts and predicted shard
walls before and after, against the suite's timeout. Pure.

Shards are counted as the gating label would dispatch them and planned as the runner would
(`config.planner`), on the seconds sglang's CI plans with (`sharding.model.PlanNumbers`: the
partition model's est, else the history's p90, else est_time); a shard's predicted wall is the
best estimate the data allows (`PlanNumbers.shard_wall`). GPU cost counts est_time x the
runner's GPUs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from ci_budget.config import Config
from ci_budget.models import Registration
from ci_budget.sharding.dispatch import PlanNumbers, suite_shards
from ci_budget.sharding.select import lpt


class SuiteImpact(BaseModel):
    suite: str
    backend: str
    stage: str | None = None
    runner_config: str | None = None
    gpus: int | None = None
    files_before: int = 0
    files_after: int = 0
    est_before: float = 0.0
    est_after: float = 0.0
    shards_before: int = 0
    shards_after: int = 0
    makespan_before: float = 0.0
    makespan_after: float = 0.0
    loads_before: list[float] = Field(default_factory=list)  # predicted wall per shard
    loads_after: list[float] = Field(default_factory=list)
    planned_after: float = 0.0  # Σ of the seconds the head is planned on
    coeff: float = 1.0  # the suite's fit: wall = coeff x Σ + bias per shard
    bias: float = 0.0
    timeout_s: float = 0.0
    risk: str = "ok"

    @property
    def delta(self) -> float:
        return self.est_after - self.est_before

    @property
    def gpu_seconds_delta(self) -> float | None:
        return None if self.gpus is None else self.delta * self.gpus


def runner_gpus(
    reg: Registration | None, suite: str, config: Config
) -> tuple[str | None, int | None]:
    """(runner config, GPUs) of a suite: its runner_config, or for a legacy suite name the
    configured runner it ends with (`per-commit-2-gpu-large` -> `2-gpu-large`)."""
    name = config.suite_runner(suite) or (reg.runner_config if reg is not None else None)
    if name is None:
        ends = [r for r in config.all_runners() if suite == r or suite.endswith("-" + r)]
        name = max(ends, key=len) if ends else None
    runner = config.runner(name)
    return name, (runner.gpus if runner is not None else None)


def _plan_suite(
    regs: list[Registration], suite: str, config: Config, numbers: PlanNumbers
) -> tuple[list[float], float]:
    """The predicted wall of each shard, and Σ planned seconds; as many shards as the gating
    label would dispatch (the suite's own timeout, pinned counts, the configured shard rule).
    A per-commit run leaves out the suite's nightly=True registrations; a suite of only those
    runs them (`run --nightly`)."""
    regs = [r for r in regs if not r.nightly] or regs
    if not regs:
        return [], 0.0
    seconds = numbers.weights(regs)
    shards = suite_shards(suite, regs, config, seconds, numbers.model).size
    planned = math.fsum(seconds.get((r.file, r.suite), r.est_time) for r in regs)
    return shard_walls(regs, suite, shards, numbers), planned


def shard_walls(
    regs: Sequence[Registration], suite: str, shards: int, numbers: PlanNumbers
) -> list[float]:
    """The predicted wall of each of `shards` shards (index = partition; an empty shard too:
    it is dispatched all the same), split as the runner splits them: LPT on the seconds sglang
    dispatches on (`numbers.weights`); each wall from the best estimate (`shard_wall`)."""
    seconds = numbers.weights(regs)
    items = sorted((r.file, seconds.get((r.file, r.suite), r.est_time)) for r in regs)
    est = {r.file: r.est_time for r in regs}
    return [numbers.shard_wall(suite, [(f, est[f]) for f in s]) for s in lpt(items, shards)]


def _risk(span: float, timeout: float, config: Config) -> str:
    if span > timeout:
        return "over"
    if span > config.thresholds.near * timeout:
        return "near"
    return "ok"


def suite_impacts(
    base: Sequence[Registration],
    head: Sequence[Registration],
    keys: Iterable,
    config: Config,
    numbers: PlanNumbers | None = None,
) -> list[SuiteImpact]:
    numbers = numbers or PlanNumbers()
    out = []
    for backend, suite in sorted(set(keys)):
        before = [r for r in base if r.suite == suite and r.backend == backend and r.enabled]
        after = [r for r in head if r.suite == suite and r.backend == backend and r.enabled]
        ref = next(iter(after or before), None)
        if ref is None:
            ref = next((r for r in [*head, *base] if r.suite == suite), None)
        stage = ref.stage if ref else None
        runner_config, gpus = runner_gpus(ref, suite, config)
        timeout = config.suite_timeout_s(suite, stage)
        loads_b, _ = _plan_suite(before, suite, config, numbers)
        loads_a, planned = _plan_suite(after, suite, config, numbers)
        span_a = max(loads_a, default=0.0)
        coeff, bias = numbers.coeff_bias(suite)
        out.append(
            SuiteImpact(
                suite=suite,
                backend=backend,
                stage=stage,
                runner_config=runner_config,
                gpus=gpus,
                files_before=len(before),
                files_after=len(after),
                est_before=sum(r.est_time for r in before),
                est_after=sum(r.est_time for r in after),
                shards_before=len(loads_b),
                shards_after=len(loads_a),
                makespan_before=max(loads_b, default=0.0),
                makespan_after=span_a,
                loads_before=loads_b,
                loads_after=loads_a,
                planned_after=planned,
                coeff=coeff,
                bias=bias,
                timeout_s=timeout,
                risk=_risk(span_a, timeout, config),
            )
        )
    return out


def made_worse(s: SuiteImpact) -> bool:
    """The PR lengthens the suite's predicted makespan (a new suite counts as lengthened)."""
    return s.files_before == 0 or s.makespan_after > s.makespan_before + 0.5


def pr_risk(s: SuiteImpact) -> str:
    """The suite's stage-timeout risk that is this PR's doing: its risk after the PR when the
    PR lengthens it, else ok (a suite already near or over and not made worse is context)."""
    return s.risk if made_worse(s) else "ok"
