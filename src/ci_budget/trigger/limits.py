"""What one label may start: runner configs on an allowlist and a bounded number of jobs. Pure.

A label runs every suite the PR registers, and the PR writes the registrations: without a bound
one label could plan hundreds of jobs on the largest runners (a registration names any runner
config the configuration knows). So a label's rows keep only allowed runner configs (by default
the ones the repository's own CI files, or its configuration, name; else ci-budget's built-in
ones), and a plan of more than `label-max-jobs` jobs is refused with the numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ci_budget.config import DEFAULT_RUNNER_CONFIGS, Config
from ci_budget.models import MatrixRow, Registration
from ci_budget.trigger.rows import suite_rows


def allowed_runner_configs(config: Config) -> list[str]:
    configured = config.github.label_runner_configs
    if configured is not None:
        return list(configured)
    return list(config.runner_configs or DEFAULT_RUNNER_CONFIGS)


def label_limits(
    rows: Sequence[MatrixRow], config: Config
) -> tuple[list[MatrixRow], list[str], str | None]:
    """(the rows a label may run, notes on the rows left out, why the whole plan is refused or
    None)."""
    allowed = set(allowed_runner_configs(config))
    kept = [r for r in rows if r.runner_config in allowed]
    left = Counter(r.runner_config for r in rows if r.runner_config not in allowed)
    notes = [
        f"{count} job{'' if count == 1 else 's'} on runner config '{name}' not run: a label "
        "runs only the runner configs of the repository's CI (github.label-runner-configs)"
        for name, count in sorted(left.items())
    ]
    limit = config.github.label_max_jobs
    if len(kept) <= limit:
        return kept, notes, None
    by_config = Counter(r.runner_config for r in kept)
    biggest = ", ".join(f"{n} on {name}" for name, n in by_config.most_common(3))
    why = (
        f"{len(kept)} jobs planned ({biggest}); a label starts at most {limit} "
        "(github.label-max-jobs)"
    )
    return [], notes, why


def label_rows(
    registrations: Sequence[Registration],
    chosen: Sequence[str],
    config: Config,
    weights: dict | None = None,
    model: Any = None,
) -> tuple[list[MatrixRow], list[str], str | None]:
    """The rows the gating labels `chosen` run (their stages, sharded), within the limits:
    (rows, notes, why the plan is refused or None)."""
    if not chosen:
        return [], [], None
    patterns = stages(chosen, config.github.gating_labels)
    rows, notes = suite_rows(registrations, config, weights, patterns, model)
    kept, left_out, why = label_limits(rows, config)
    return kept, notes + left_out, why


def stages(chosen: Sequence[str], gating) -> list[str] | None:
    """The stage patterns the chosen labels gate; None: every stage."""
    patterns: list[str] = []
    for name in chosen:
        if not gating[name]:
            return None  # an empty list gates every stage
        patterns.extend(s for s in gating[name] if s not in patterns)
    return patterns
