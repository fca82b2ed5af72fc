"""Use case `history suggest`: new est_time values from the timing history, or from a
partition model as sglang's updater writes them, optionally written back."""

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
        False, flag="--all",
        help="also list (and with --write, write) changes below the 30 s / 30 %% rule",
    )  # fmt: skip
    partition_model: Path | None = option(
        None, metavar="FILE",
        help="suggest sglang-ci-stats model.json's est as sglang's update_est_time.py writes "
        "it (each says whether that script's text match finds the call); no history needed",
    )  # fmt: skip


def suggest(settings, options: SuggestOptions, sink: Sink | None = None) -> int:
    """Exit 2 when a file could not be rewritten or the model could not be used."""
    from ci_budget.registry.parse import select
    from ci_budget.workspace.scan import scan_tree

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    found_scan = scan_tree(root, config)
    regs = select(found_scan, suites=options.suites)
    found = _found(settings, options, regs, sink)
    if found is None:
        return 2
    if options.format == "json":
        sink.json(
            [s.model_dump(mode="json") | {"delta": s.delta, "significant": _big(s)} for s in found]
        )
    else:
        for s in found:
            sink.echo(_line(s, _big(s)))
        if not found:
            sink.echo("no est_time changes to suggest")
    for problem in found_scan.errors:
        sink.warn(f"registry error, file skipped: {problem}")
    if not options.write:
        return 0
    return 2 if _rewrite(settings, found, sink, options.include_all) else 0


def _big(s) -> bool:
    from ci_budget.budget.suggest import significant

    return significant(s.est_time, s.suggested)


def _found(settings, options: SuggestOptions, regs, sink: Sink):
    """The suggestions, from the model when one is given, else from the history store."""
    from ci_budget.app.history import open_store, store_path
    from ci_budget.budget import suggest as rule

    if options.partition_model is None:
        history = open_store(store_path(settings, options.store))
        return rule.suggest(
            regs, history, settings.config.thresholds, options.min_samples,
            include_all=options.include_all,
        )  # fmt: skip
    from ci_budget.app.numbers import note_uncovered, partition_model
    from ci_budget.sharding.model import PlanNumbers
    from ci_budget.workspace.sources import read_source

    model = partition_model(options.partition_model, sink)
    if model is None:
        return None
    if options.suites:
        note_uncovered(PlanNumbers(model=model), options.suites, sink)

    def read(rel: str) -> str | None:
        try:
            return read_source(settings.root / rel)
        except (OSError, UnicodeDecodeError):
            return None

    return rule.from_model(regs, model, read, include_all=options.include_all)


def _line(s, significant: bool) -> str:
    from ci_budget.units import secs

    mark = "" if significant else "  (below 30s / 30%)"
    if s.source == "model":
        how = (
            "sglang's updater makes it too"
            if s.updater
            else f"sglang's updater misses it: {s.updater_missed}"
        )
        return (
            f"{s.file}:{s.line}: {s.suite}: est_time {s.est_time:g} -> {s.suggested:g} "
            f"({secs(s.delta, '+')}; the model's est; {how}){mark}"
        )
    timeouts = f"; {s.timeouts} timeout(s), >= {secs(s.timeout_lower_bound)}" if s.timeouts else ""
    return (
        f"{s.file}:{s.line}: {s.suite}: est_time {s.est_time:g} -> {s.suggested} "
        f"({secs(s.delta, '+')}; p90 {secs(s.p90)} over {s.n} passing run(s){timeouts}){mark}"
    )


def _rewrite(settings, found, sink: Sink, include_all: bool = False) -> int:
    """Write each listed suggestion (only the significant ones without --all) into its file,
    changing only the est_time literal; returns how many failed."""
    from ci_budget.budget.suggest import RewriteError, rewrite_est_time, significant
    from ci_budget.workspace.sources import read_source, write_source

    failed = 0
    for s in found:
        if not include_all and not significant(s.est_time, s.suggested):
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
