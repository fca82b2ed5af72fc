"""Which suites a gating label runs and in how many shards, as sglang's `compute_partitions.py`
decides: per-commit registrations only (enabled, not nightly, of the dispatched backends), shard
counts from each suite's own timeout, pinned counts where configured, and a `max_parallel` per
suite that rations scarce GPU runners. Pure."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ci_budget.config import Config
from ci_budget.models import Registration, secs
from ci_budget.sharding.model import PartitionModel
from ci_budget.sharding.select import min_shards


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
