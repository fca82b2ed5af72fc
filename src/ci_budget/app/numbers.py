"""The numbers every command plans, predicts and suggests with: the partition model and the
timing history, read once each with one policy for bad input (a warning line, then sglang's
fallback: est_time per file, coeff 1 and bias 0 per suite). The one place that loads them:
plan, diff, report, run, suggest, watch and `history` read them through these functions, which
call the file edge (`workspace.files`) once each."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ci_budget import HISTORY_STORE
from ci_budget.app.settings import AppError, Sink, option

# -- the history store


def open_store(path: Path, max_samples: int | None = None, missing_ok: bool = False, what=""):
    """The History at `path`; an AppError (prefixed with `what`) when it cannot be used."""
    from ci_budget.history.model import HistoryError
    from ci_budget.workspace.files import load_history

    try:
        return load_history(path, max_samples, missing_ok=missing_ok)
    except HistoryError as exc:
        raise AppError(f"{what}{exc}") from None


STORE_HELP = f"the timing history store (default: {HISTORY_STORE} at --root when given, else here)"


def store_option():
    """The `--history FILE` of the history commands (None: `store_path`'s default)."""
    return option(None, flag="--history", metavar="FILE", help=STORE_HELP)


def store_path(settings, given: Path | None) -> Path:
    """The store a history command uses: `given`, else the default one at --root when one was
    given, else in the current directory."""
    if given is not None:
        return given
    return (settings.root if settings.root_given else Path()) / HISTORY_STORE


# -- the numbers a plan uses


def partition_model(path: Path | None, sink: Sink):
    """The model at `path` (None without one); each problem with it is one warning line."""
    if path is None:
        return None
    from ci_budget.workspace.files import read_model

    model, problems = read_model(path)
    for line in problems:
        sink.warn(f"--partition-model {line}")
    return model


def plan_numbers(history: Path | None, model: Path | None, sink: Sink, lenient: bool = False):
    """`PlanNumbers` from the two files. A history store that cannot be used is an error, or
    with `lenient` (plan: someone else's bad input never fails it) a warning and no history."""
    from ci_budget.sharding.dispatch import PlanNumbers

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
    from ci_budget.sharding.dispatch import uncovered

    missing = uncovered(numbers.model if numbers is not None else None, suites)
    if missing:
        shown = ", ".join(missing[:6]) + (
            f" and {len(missing) - 6} more" if len(missing) > 6 else ""
        )
        sink.warn(
            f"--partition-model {numbers.model.source}: nothing for suite(s) {shown}; "
            "their files use est_time (or measured p90), coeff 1, bias 0"
        )
