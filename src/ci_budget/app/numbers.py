"""The numbers every command plans, predicts and suggests with: the partition model and the
timing history, read once each with one policy for bad input (a warning line, then sglang's
fallback: est_time per file, coeff 1 and bias 0 per suite)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.sink import Sink


def partition_model(path: Path | None, sink: Sink):
    """The model at `path` (None without one); each problem with it is one warning line."""
    if path is None:
        return None
    from ci_budget.workspace.model_file import read_model

    model, problems = read_model(path)
    for line in problems:
        sink.warn(f"--partition-model {line}")
    return model


def plan_numbers(history: Path | None, model: Path | None, sink: Sink, lenient: bool = False):
    """`PlanNumbers` from the two files. A history store that cannot be used is an error, or
    with `lenient` (plan: someone else's bad input never fails it) a warning and no history."""
    from ci_budget.app.history import open_store
    from ci_budget.sharding.model import PlanNumbers

    store = None
    if history is not None:
        try:
            store = open_store(history, what="--history: ")
        except AppError as exc:
            if not lenient:
                raise
            sink.warn(f"{exc}; shard counts use est_time")
    return PlanNumbers(model=partition_model(model, sink), history=store)


def note_uncovered(numbers, suites: Iterable[str], sink: Sink) -> None:
    """One line naming the suites the model has nothing for (sglang then plans them on
    est_time with coeff 1, bias 0, and so does ci-budget)."""
    from ci_budget.sharding.model import uncovered

    missing = uncovered(numbers.model if numbers is not None else None, suites)
    if missing:
        shown = ", ".join(missing[:6]) + (
            f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        )
        sink.warn(
            f"--partition-model {numbers.model.source}: nothing for suite(s) {shown}; "
            "their files use est_time (or measured p90), coeff 1, bias 0"
        )
