"""Matrix rows for a plan: per-commit suites sharded into jobs, and the rows' one-line summary.
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ci_budget.config import Config
from ci_budget.models import MatrixRow, Registration
from ci_budget.sharding.dispatch import dispatch


def _install(config: Config, name: str | None) -> str | None:
    runner = config.runner(name)  # None for no name and for an unknown one
    return runner.install if runner is not None else None


def suite_rows(
    registrations: Sequence[Registration],
    config: Config,
    weights: dict[tuple[str, str], float] | None = None,
    patterns: Sequence[str] | None = None,
    model: Any = None,
) -> tuple[list[MatrixRow], list[str]]:
    """Matrix rows for the per-commit suites `patterns` select (None: all), sharded as
    sglang's compute_partitions.py does; and notes on suites that cannot run."""
    plans, notes = dispatch(registrations, config, patterns, weights, model)
    rows: list[MatrixRow] = []
    for p in plans:
        for i in range(p.size):
            rows.append(
                MatrixRow(
                    name=p.suite if p.size == 1 else f"{p.suite} {i + 1}/{p.size}",
                    runner_config=p.runner_config,
                    runs_on=p.runs_on,
                    suite=p.suite,
                    backend=p.backend,
                    partition=f"{i}/{p.size}",
                    max_parallel=p.max_parallel,
                    install=_install(config, p.runner_config),
                )
            )
    return rows, notes


def _count(items: Sequence[Any], word: str) -> str:
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"


def summary(rows: Sequence[MatrixRow]) -> str:
    """`N jobs: M suites (a, b); K specs on RUNNER`, for a plan's reason."""
    suites = list(dict.fromkeys(r.suite for r in rows if r.suite))
    parts = [f"{_count(suites, 'suite')} ({', '.join(suites)})"] if suites else []
    parts += [f"{_count(r.specs, 'spec')} on {r.runner_config}" for r in rows if not r.suite]
    return f"{_count(rows, 'job')}: " + "; ".join(parts)
