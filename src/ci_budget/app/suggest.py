"""Use case `history suggest`: new est_time values from the timing history, optionally written
back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.history import store_option
from ci_budget.app.options import option
from ci_budget.app.sink import Sink


@dataclass
class SuggestOptions:
    store: Path | None = store_option()
    suites: list[str] = option(list, flag="--suite", help="only this suite (repeatable)")
    write: bool = option(False, help="rewrite est_time in the test files")
    format: str = option("text", choices=("text", "json"), help="what to print")
    min_samples: int = option(1, help="passing runs needed for a suggestion")
    include_all: bool = option(
        False, flag="--all", help="also list changes below the 30 s / 30 %% rule"
    )


def suggest(settings, options: SuggestOptions, sink: Sink | None = None) -> int:
    """Exit 2 when a file could not be rewritten."""
    from ci_budget.app.history import open_store, store_path
    from ci_budget.budget import suggest as rule
    from ci_budget.registry.parse import select
    from ci_budget.workspace.scan import scan_tree

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    history = open_store(store_path(settings, options.store))
    found_scan = scan_tree(root, config)
    regs = select(found_scan, suites=options.suites)
    found = rule.suggest(
        regs, history, config.thresholds, options.min_samples, include_all=options.include_all
    )
    if options.format == "json":
        sink.json([s.model_dump(mode="json") | {"delta": s.delta} for s in found])
    else:
        for s in found:
            sink.echo(_line(s, rule.significant(s.est_time, s.suggested)))
        if not found:
            sink.echo("no est_time changes to suggest")
    for problem in found_scan.errors:
        sink.warn(f"registry error, file skipped: {problem}")
    if not options.write:
        return 0
    return 2 if _rewrite(settings, found, sink) else 0


def _line(s, significant: bool) -> str:
    mark = "" if significant else "  (below 30 s / 30 %)"
    timeouts = f"; {s.timeouts} timeout(s), >= {s.timeout_lower_bound:.0f} s" if s.timeouts else ""
    return (
        f"{s.file}:{s.line}: {s.suite}: est_time {s.est_time:g} -> {s.suggested} "
        f"({s.delta:+.0f} s; p90 {s.p90:.0f} s over {s.n} passing run(s){timeouts}){mark}"
    )


def _rewrite(settings, found, sink: Sink) -> int:
    """Write each significant suggestion into its file; returns how many failed."""
    from ci_budget.budget.suggest import RewriteError, rewrite_est_time, significant
    from ci_budget.workspace.sources import read_source, write_source

    failed = 0
    for s in found:
        if not significant(s.est_time, s.suggested):
            continue
        path = settings.root / s.file
        try:
            text = read_source(path)
            new = rewrite_est_time(text, s.file, s.suite, s.backend, s.suggested, settings.config)
            write_source(path, new)
        except (OSError, RewriteError, SyntaxError) as exc:
            sink.error(f"{s.file}:{s.line}: not rewritten: {exc}")
            failed += 1
            continue
        sink.note(f"wrote {s.file}:{s.line}: est_time={s.suggested}")
    return failed
