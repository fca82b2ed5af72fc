"""Use cases `history add` and `history show`, and the store as the other use cases open it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget import HISTORY_STORE
from ci_budget.app.errors import AppError
from ci_budget.app.options import option
from ci_budget.app.sink import Sink


def open_store(path: Path, max_samples: int | None = None, missing_ok: bool = False, what=""):
    """The History at `path`; an AppError (prefixed with `what`) when it cannot be used."""
    from ci_budget.history.model import HistoryError
    from ci_budget.workspace.history_store import load_history

    try:
        return load_history(path, max_samples, missing_ok=missing_ok)
    except HistoryError as exc:
        raise AppError(f"{what}{exc}") from None


def measured_weights(path: Path | None, registrations) -> dict[tuple[str, str], float]:
    """(file, suite) -> measured p90 from the store at `path` ({} without one). Every shard of
    a run must read the same store, or the shards would split the files differently."""
    if path is None:
        return {}
    from ci_budget.sharding.planners import weights_for

    history = open_store(path, what="--history: ")
    regs = list(registrations)
    return {
        (reg.file, reg.suite): seconds
        for reg, (_, seconds) in zip(regs, weights_for(regs, history), strict=True)
    }


STORE_HELP = f"the timing history store (default: {HISTORY_STORE} at --root when given, else here)"


def store_option(old: tuple[str, ...] = ("--store",)):
    """The `--history FILE` of the history commands (None: `store_path`'s default)."""
    return option(None, flag="--history", old=old, metavar="FILE", help=STORE_HELP)


def store_path(settings, given: Path | None) -> Path:
    """The store a history command uses: `given`, else the default one at --root when one was
    given, else in the current directory."""
    if given is not None:
        return given
    return (settings.root if settings.root_given else Path()) / HISTORY_STORE


@dataclass
class AddOptions:
    results: list[Path] = option(
        list, flag=None, nargs="+", metavar="RESULTS", help="results files (RunResults JSON)"
    )
    store: Path | None = store_option()
    max_samples: int | None = option(
        None, help="samples kept per (file, suite), newest first (default: the store's, else 50)"
    )


def add(settings, options: AddOptions, sink: Sink | None = None) -> int:
    """Add results files to the store; exit 2 when any was unusable (the others are kept)."""
    from ci_budget.workspace.history_store import save_history
    from ci_budget.workspace.result_files import ResultsError, read_results

    sink = sink or Sink(settings)
    settings.check()
    store = store_path(settings, options.store)
    if options.max_samples is not None and options.max_samples < 1:
        raise AppError(f"--max-samples must be at least 1, not {options.max_samples}")
    history = open_store(store, options.max_samples, missing_ok=True)
    bad = []
    added = 0
    for path in options.results:
        try:
            results = read_results(path)
        except ResultsError as exc:
            bad.append(exc.briefly(path))
            continue
        count = history.add_results(results)
        added += count
        sink.echo(f"{path}: {count} new sample(s)")
    if len(bad) == len(options.results) and not store.exists():
        sink.echo(f"{store}: not created (no results file could be read)")
    else:  # good files are kept even when others are bad: measured data is never dropped
        save_history(store, history)
        sink.echo(f"{store}: {added} sample(s) added, {len(history.keys())} (file, suite) series")
    for message in bad:
        sink.error(message)
    return 2 if bad else 0


@dataclass
class ShowOptions:
    store: Path | None = store_option(old=("--store", "STORE"))
    format: str = option(
        "text",
        choices=("text", "json", "markdown"),
        help="what to print: markdown adds a picture per series (Mermaid, as GitHub draws it)",
    )
    suites: list[str] = option(list, flag="--suite", help="only this suite (repeatable)")
    files: list[str] = option(
        list, flag="--file", metavar="PATH",
        help="only this test file, as the store names it (repeatable)",
    )  # fmt: skip


def show(settings, options: ShowOptions, sink: Sink | None = None) -> int:
    sink = sink or Sink(settings)
    settings.check()
    store = store_path(settings, options.store)
    history = open_store(store)
    stats = [
        s
        for s in history.all_stats()
        if (not options.suites or s.suite in options.suites)
        and (not options.files or s.file in options.files)
    ]
    if options.files and not stats:
        known = ", ".join(sorted({f for f, _ in history.keys()})[:5]) or "none"
        raise AppError(f"{store}: no samples of {', '.join(options.files)} (has: {known})")
    if options.format == "json":
        sink.json([s.model_dump(mode="json") for s in stats])
        return 0
    if options.format == "markdown":
        from ci_budget.render.history_md import markdown

        trends = {(s.file, s.suite): history.trend(s.file, s.suite) for s in stats}
        sink.write(markdown(stats, trends))
        return 0
    sink.write(_table(stats))
    if not stats:
        sink.echo("(no samples)")
    return 0


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def _table(stats) -> str:
    from ci_budget.render.table import aligned_text

    header = ("file", "suite", "runs", "passed", "p50", "p90", "max", "timeouts", "failed")
    rows = [
        (
            s.file,
            s.suite or "(no suite)",
            str(s.runs),
            str(s.n),
            _fmt(s.p50),
            _fmt(s.p90),
            _fmt(s.max),
            f"{s.timeouts} (>= {s.timeout_lower_bound:.0f} s)" if s.timeouts else "0",
            str(s.failed),
        )
        for s in stats
    ]
    return aligned_text([header, *rows])


def partition_model(path: Path | None, sink: Sink):
    """The sglang-ci-stats model at `path`, or None (with a warning when a named file cannot be
    used): shards are then planned on est_time, as sglang's scripts fall back."""
    import json

    from ci_budget.sharding.model import model_from_json

    if path is None:
        return None
    try:
        model = model_from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else f"invalid JSON: {exc}"
        sink.warn(f"--partition-model {path}: {reason}; using est_time")
        return None
    if model is None:
        sink.warn(f"--partition-model {path}: not a JSON object; using est_time")
    return model
