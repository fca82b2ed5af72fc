"""Use cases `history add` and `history show`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.numbers import open_store, store_option, store_path
from ci_budget.app.settings import AppError, Sink, option


@dataclass
class AddOptions:
    results: list[Path] = option(
        list,
        flag=None,
        nargs="+",
        metavar="RESULTS",
        help="ci-budget results files, sglang-ci-stats run files, or directories of them",
    )
    store: Path | None = store_option()
    max_samples: int | None = option(
        None, help="samples kept per (file, suite), newest first (default: the store's, else 50)"
    )


def add(settings, options: AddOptions, sink: Sink | None = None) -> int:
    """Add results files and sglang-ci-stats run files (or directories of them) to the store;
    exit 2 when any was unusable (one line each; the others are kept)."""
    from ci_budget.workspace.files import save_history

    sink = sink or Sink(settings)
    settings.check()
    store = store_path(settings, options.store)
    if options.max_samples is not None and options.max_samples < 1:
        raise AppError(f"--max-samples must be at least 1, not {options.max_samples}")
    history = open_store(store, options.max_samples, missing_ok=True)
    bad: list[str] = []
    added = 0
    for path in options.results:
        if path.is_dir():
            added += add_directory(history, path, bad, sink)
            continue
        count = add_file(history, path, bad, in_directory=False)
        if count is not None:
            added += count
            sink.echo(f"{path}: {count} new sample(s)")
    if bad and not added and not store.exists():
        sink.echo(f"{store}: not created (no results file could be read)")
    else:  # good files are kept even when others are bad: measured data is never dropped
        save_history(store, history)
        sink.echo(f"{store}: {added} sample(s) added, {len(history.keys())} (file, suite) series")
    for message in bad:
        sink.error(message)
    return 2 if bad else 0


def add_file(history, path: Path, bad: list[str], in_directory: bool) -> int | None:
    """New samples from one file (a results file or a run file, told apart by shape); None
    when it was not used (a line in `bad`, or in a directory, silence for other JSON)."""
    from ci_budget.history.cistats import RunFileError, add_run, is_run_file, parse_run
    from ci_budget.workspace.files import ResultsError, parse_results, read_json

    try:
        data = read_json(path)
    except ResultsError as exc:
        bad.append(str(exc))
        return None
    if is_run_file(data):
        try:
            return add_run(history, parse_run(data)).samples
        except RunFileError as exc:
            bad.append(f"{path}: not a usable sglang-ci-stats run file: {exc}")
            return None
    versioned = isinstance(data, dict) and "schema_version" in data
    if in_directory and not versioned:
        return None  # other JSON beside the runs (a clone's model.json): not ours to read
    try:
        return history.add_results(parse_results(data, str(path)))
    except ResultsError as exc:
        if versioned or exc.fields:
            bad.append(exc.briefly(path))
        else:
            bad.append(
                f"{path}: neither a ci-budget results file (no schema_version) nor an "
                "sglang-ci-stats run file (no run_id and jobs list)"
            )
        return None


def add_directory(history, root: Path, bad: list[str], sink: Sink) -> int:
    """Every results or run file under `root` (a clone of sglang-ci-stats: its runs/)."""
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    used, added, before = 0, 0, len(bad)
    for path in files:
        count = add_file(history, path, bad, in_directory=True)
        if count is not None:
            used += 1
            added += count
    if not used and len(bad) == before:
        bad.append(f"{root}: no ci-budget results or sglang-ci-stats run files in it")
    else:
        sink.echo(f"{root}: {used} file(s) read, {added} new sample(s)")
    return added


@dataclass
class ShowOptions:
    store: Path | None = store_option()
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


def _table(stats) -> str:
    from ci_budget.models import secs
    from ci_budget.render.blocks import aligned_text

    header = ("file", "suite", "runs", "passed", "p50", "p90", "max", "timeouts", "failed")
    rows = [
        (
            s.file,
            s.suite or "(no suite)",
            str(s.runs),
            str(s.n),
            secs(s.p50),
            secs(s.p90),
            secs(s.max),
            f"{s.timeouts} (>= {secs(s.timeout_lower_bound)})" if s.timeouts else "0",
            str(s.failed),
        )
        for s in stats
    ]
    return aligned_text([header, *rows])
