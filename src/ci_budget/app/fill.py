"""Use case `guard fill`: a file's guard tables, optionally filled with a
run's recorded values in the column of the run's architecture."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import AppError, Sink, option


@dataclass
class FillOptions:
    file: str = option(flag=None, help="test file with a measured table in a docstring")
    fill_from: list[Path] = option(
        list, metavar="RESULTS", help="results JSON of a run (repeatable)"
    )
    arch: str | None = option(
        None, needs="fill_from", help="architecture of the run (default: the results' detected GPU)"
    )
    reverted: bool = option(
        False,
        needs="fill_from",
        help="the run had the fix reverted: fill the 'fix reverted' column",
    )
    property: str = option(
        "avg_kl_div", needs="fill_from", help="record_property name of the value"
    )
    write: bool = option(False, help="edit FILE in place (needs --fill-from)")
    group: str | None = option(
        None,
        metavar="FIX",
        help="with --reverted: the fix the run reverted (a group label such as '#34184'); "
        "only its rows are filled",
    )
    pattern: str | None = option(
        None, needs="fill_from", help="what tests print for the value (default: arch.value-pattern)"
    )


def fill(settings, options: FillOptions, sink: Sink | None = None) -> int:
    """Print the tables (exit 1 when there are none), or the filled rows (exit 1 when nothing
    matched, 2 on a bad table)."""
    from ci_budget.arch.docstrings import parse_source
    from ci_budget.workspace.files import read_source, repo_relative

    sink = sink or Sink(settings)
    root, amap = settings.root, settings.config.gpu_arch_map()
    rel = repo_relative(root, options.file)
    try:
        source = read_source(root / rel)
    except (OSError, UnicodeDecodeError) as exc:
        raise AppError(f"{options.file}: cannot read: {exc}") from None
    if options.write and not options.fill_from:
        raise AppError("--write needs --fill-from")
    if options.group and not options.reverted:
        raise AppError("--group needs --reverted (the fixed column is every fix's)")
    rows, problems, tables = parse_source(source, rel, amap)
    for problem in problems:
        sink.error(str(problem))
    if not options.fill_from:
        for node, line_map, table in tables:
            lines = node.value.split("\n")
            sink.echo(f"{rel}:{line_map[table.first] or node.lineno}:")
            sink.echo("\n".join(lines[table.first : table.last + 1]))
        return 0 if tables else 1
    return _fill(settings, options, sink, rel, source, rows)


def _fill(settings, options: FillOptions, sink: Sink, rel: str, source: str, rows) -> int:
    from ci_budget.arch.docstrings import class_names
    from ci_budget.arch.fill import fill_source
    from ci_budget.arch.layout import ArchTableError
    from ci_budget.arch.match import attach_measured

    config = settings.config
    amap = config.gpu_arch_map()
    arch = given_arch(options.arch, amap)
    results = _results(options.fill_from)
    arch = arch or detected_arch(results, amap)
    match_problems: list = []  # values matching no row, rows claimed twice: listed, not guessed
    attach_measured(
        rows, results, arch, options.property, match_problems, amap,
        pattern=options.pattern or config.arch.value_pattern, mapping=config.arch.rows,
        classes={rel: class_names(source)}, group=options.group, one_fix=options.reverted,
    )  # fmt: skip
    for problem in match_problems:
        sink.warn(str(problem))
    try:
        new, touched, fill_problems = fill_source(source, rel, rows, arch, options.reverted, amap)
    except ArchTableError as exc:
        raise AppError(str(exc)) from None
    for problem in fill_problems:
        sink.error(str(problem))
    if not touched:
        sink.note(f"no measured value matched a row of {rel} for {arch}")
        return 1
    for line, lines in touched:
        sink.echo(f"{rel}:{line}:")
        sink.echo("\n".join(lines))
    if options.write and new != source:
        from ci_budget.workspace.files import write_source

        write_source(settings.root / rel, new)
        sink.note(f"wrote {rel}")
    return 1 if fill_problems else 0


def given_arch(given: str | None, amap) -> str | None:
    """--arch as an architecture (None when not given)."""
    from ci_budget.arch.layout import normalize_arch

    if not given:
        return None
    arch = normalize_arch(given, amap)
    if arch is None:
        raise AppError(f"--arch {given}: not an architecture or a known GPU name")
    return arch


def detected_arch(results, amap) -> str:
    """The one architecture the results' GPUs name."""
    from ci_budget.arch.layout import normalize_arch

    named = (normalize_arch(r.meta.gpu.arch or "", amap) for r in results if r.meta.gpu)
    found = {arch for arch in named if arch is not None}
    if len(found) != 1:
        raise AppError("cannot tell the run's architecture from the results; pass --arch")
    return found.pop()


def _results(paths) -> list:
    from ci_budget.workspace.files import ResultsError, read_results

    out = []
    for path in paths:
        try:
            out.append(read_results(Path(path)))
        except ResultsError as exc:
            raise AppError(exc.briefly(path)) from None
    return out
