"""Per-suite impact of a registry change: files, est_time, shard counts and planned makespans
before and after, against the suite's timeout. Pure.

Shards are counted as the gating label would dispatch them and planned as the runner would
(`config.planner`); GPU cost counts est_time x the runner's GPUs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from ci_budget.config import Config
from ci_budget.models import Registration
from ci_budget.sharding.dispatch import suite_shards
from ci_budget.sharding.planners import plan


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
    loads_before: list[float] = Field(default_factory=list)  # est_time per planned shard
    loads_after: list[float] = Field(default_factory=list)
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


def _plan_suite(regs: list[Registration], suite: str, config: Config) -> list[float]:
    """The planned est_time of each shard; as many shards as the gating label would dispatch
    (the suite's own timeout, pinned counts, the configured shard rule). A per-commit run leaves out the
    suite's nightly=True registrations; a suite of only those runs them (`run --nightly`)."""
    regs = [r for r in regs if not r.nightly] or regs
    items = sorted((r.file, r.est_time) for r in regs)
    if not items:
        return []
    shards = suite_shards(suite, regs, config).size
    weights: dict[str, float] = defaultdict(float)
    for key, seconds in items:
        weights[key] += seconds
    shards_plan = plan(items, shards, config.planner.algorithm)
    # one per shard, even an empty one: the gating label dispatches it all the same
    loads = [math.fsum(weights[key] for key in shard) for shard in shards_plan]
    return loads + [0.0] * (shards - len(loads))


def _risk(span: float, timeout: float, config: Config) -> str:
    if span > timeout:
        return "over"
    if span > config.thresholds.near * timeout:
        return "near"
    return "ok"


def suite_impacts(
    base: Sequence[Registration], head: Sequence[Registration], keys: Iterable, config: Config
) -> list[SuiteImpact]:
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
        loads_b = _plan_suite(before, suite, config)
        loads_a = _plan_suite(after, suite, config)
        span_a = max(loads_a, default=0.0)
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
