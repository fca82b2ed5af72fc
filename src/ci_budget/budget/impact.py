"""Per-suite impact of a registry change: files, est_time, shard counts and planned makespans
before and after, against the suite's timeout. Pure.

Shards are counted as the gating label would dispatch them and planned as the runner would
(`config.planner`); GPU cost counts est_time x the runner's GPUs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from ci_budget.config import Config
from ci_budget.models import Registration
from ci_budget.sharding.dispatch import suite_shards
from ci_budget.sharding.planners import makespan, plan


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


def _plan_suite(regs: list[Registration], suite: str, config: Config) -> tuple[int, float]:
    """Shards as the gating label would dispatch them (the suite's own timeout, pinned counts,
    the configured shard rule), and the planned makespan. A per-commit run leaves out the
    suite's nightly=True registrations; a suite of only those runs them (`run --nightly`)."""
    regs = [r for r in regs if not r.nightly] or regs
    items = sorted((r.file, r.est_time) for r in regs)
    if not items:
        return 0, 0.0
    shards = suite_shards(suite, regs, config).size
    weights: dict[str, float] = defaultdict(float)
    for key, seconds in items:
        weights[key] += seconds
    return shards, makespan(plan(items, shards, config.planner.algorithm), weights)


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
        shards_b, span_b = _plan_suite(before, suite, config)
        shards_a, span_a = _plan_suite(after, suite, config)
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
                shards_before=shards_b,
                shards_after=shards_a,
                makespan_before=span_b,
                makespan_after=span_a,
                timeout_s=timeout,
                risk=_risk(span_a, timeout, config),
            )
        )
    return out
