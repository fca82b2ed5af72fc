"""Use case `guard check`: guard-table rows flagged for the CI architecture."""

from __future__ import annotations

from dataclasses import dataclass

from ci_budget.app.settings import AppError, Sink, option


@dataclass
class CheckOptions:
    files: list[str] = option(
        list,
        flag=None,
        nargs="*",
        metavar="FILE",
        help="test files (default: the files of --suite)",
    )
    suites: list[str] = option(
        list, flag="--suite", help="registered files of this suite (repeatable)"
    )
    arch: str | None = option(None, help="CI architecture (sm90, SM100, H200, ...)")
    format: str = option("text", choices=("text", "json"), help="what to print")
    fail_on_flags: bool = option(
        False, help="exit 1 when a row is unverified or silent on the CI arch"
    )


def check(settings, options: CheckOptions, sink: Sink | None = None) -> int:
    """Exit 2 when a file or table cannot be read; else 1 with `fail_on_flags` when a row is
    unverified or silent on its CI arch."""
    from ci_budget.app.fill import given_arch
    from ci_budget.arch.docstrings import SILENT, UNVERIFIED
    from ci_budget.workspace.files import guard_files

    sink = sink or Sink(settings)
    arch = given_arch(options.arch, settings.config.gpu_arch_map())
    if not options.files and not options.suites:
        raise AppError("give test files or --suite")
    rows, problems = [], []
    for rels, ci_arch in _groups(settings, options, arch):
        r, p, _ = guard_files(settings.root, rels, settings.config, ci_arch)
        rows.extend(r)
        problems.extend(p)
    if options.format == "json":
        sink.json(
            {
                "rows": [r.model_dump(mode="json") for r in rows],
                "problems": [p.model_dump(mode="json") for p in problems],
            }
        )
    else:
        sink.write(_table(rows))
        for problem in problems:
            sink.error(str(problem))
    if problems:  # a file that does not parse, a table that does not read: input errors
        return 2
    flagged = any(f in (UNVERIFIED, SILENT) for r in rows for f in r.flags)
    return 1 if options.fail_on_flags and flagged else 0


def _groups(settings, options: CheckOptions, arch: str | None):
    """(files, CI arch) groups: the given files under --arch, and each suite's files under its
    runner config's arch."""
    from ci_budget.workspace.files import repo_relative

    root, config = settings.root, settings.config
    groups: list[tuple[list[str], str | None]] = []
    if options.files:
        rels = [repo_relative(root, f) for f in options.files]
        for given, rel in zip(options.files, rels, strict=True):
            if not (root / rel).is_file():
                raise AppError(f"{given}: no such file")
        groups.append((rels, arch))
    if options.suites:
        from ci_budget.registry.parse import select, unknown
        from ci_budget.workspace.scan import scan_tree

        found = scan_tree(root, config)
        known = {r.suite for r in found.registrations}
        for suite in options.suites:
            if suite not in known:
                raise AppError(unknown("suite", suite, known))
        regs = select(found, suites=options.suites)
        by_arch: dict[str | None, list[str]] = {}
        for reg in regs:
            runner = config.runner(reg.runner_config)
            key = arch or (runner.arch if runner else None)
            if reg.file not in by_arch.setdefault(key, []):
                by_arch[key].append(reg.file)
        groups.extend((files, a) for a, files in by_arch.items())
    return groups


def _table(rows) -> str:
    from ci_budget.render.blocks import aligned_text

    if not rows:
        return "no measured tables found\n"
    archs = sorted({a for r in rows for a in r.reverted})
    head = ["file:line", "group", "case", *[f"reverted {a}" for a in archs], "fixed", "ci", "flags"]
    body = [
        [
            f"{r.file}:{r.line}",
            r.group or "",
            r.case,
            *[r.reverted[a].raw or "(empty)" if a in r.reverted else "" for a in archs],
            r.fixed.raw if r.fixed else "",
            r.ci_arch or "?",
            ", ".join(r.flags),
        ]
        for r in rows
    ]
    return aligned_text([head, *body])
