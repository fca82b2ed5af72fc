"""`ci-budget arch`: measured tables in guard docstrings, flagged for the CI architecture."""

from __future__ import annotations

from ci_budget.cli.common import add_common, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "arch",
        help="check measured-per-architecture tables in guard docstrings",
        description="Read the measured tables (fix reverted / fix in place, per GPU "
        "architecture) in module and class docstrings and flag rows whose fix is not shown "
        "to matter on the CI architecture. The CI arch is --arch, else the runner config of "
        "--suite or of each file's registration, else the docstring's 'CI runs X' hint.",
        example="ci-budget arch test/registered/radix_cache/test_kl_bitexact.py\n"
        "ci-budget arch --suite base-b-test-1-gpu-large --format json --fail-on-flags",
    )
    add_common(p)
    p.add_argument("files", nargs="*", help="test files (default: the files of --suite)")
    p.add_argument("--suite", action="append", default=[], help="registered files of this suite")
    p.add_argument("--arch", help="CI architecture (sm90, SM100, H200, ...)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument(
        "--fail-on-flags",
        action="store_true",
        help="exit 1 when a row is unverified or silent on the CI arch",
    )
    return p


def _rel(root, path: str) -> str:
    from pathlib import Path

    p = Path(path)
    p = p if p.is_absolute() else Path.cwd() / p
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return path


def run(args) -> int:
    import json
    import sys

    from ci_budget.arch.flags import SILENT, UNVERIFIED, rows_for_files
    from ci_budget.arch.table import normalize_arch
    from ci_budget.cli.common import CliError, load

    root, config = load(args)
    arch = None
    if args.arch:
        arch = normalize_arch(args.arch, config.gpu_arch_map())
        if arch is None:
            raise CliError(f"--arch {args.arch}: not an architecture or a known GPU name")
    if not args.files and not args.suite:
        raise CliError("give test files or --suite")
    groups: list[tuple[list[str], str | None]] = []
    if args.files:
        for f in args.files:
            if not (root / _rel(root, f)).is_file():
                raise CliError(f"{f}: no such file")
        groups.append(([_rel(root, f) for f in args.files], arch))
    if args.suite:
        from ci_budget.registry.parse import select
        from ci_budget.workspace.scan import scan_tree

        regs = select(scan_tree(root, config), suites=args.suite)
        if not regs:
            raise CliError(f"--suite {', '.join(args.suite)}: no registered files")
        by_arch: dict[str | None, list[str]] = {}
        for reg in regs:
            runner = config.runner(reg.runner_config)
            key = arch or (runner.arch if runner else None)
            if reg.file not in by_arch.setdefault(key, []):
                by_arch[key].append(reg.file)
        groups.extend((files, a) for a, files in by_arch.items())
    rows, problems = [], []
    for rels, ci_arch in groups:
        r, p = rows_for_files(root, rels, config, ci_arch)
        rows.extend(r)
        problems.extend(p)
    if args.format == "json":
        payload = {
            "rows": [r.model_dump(mode="json") for r in rows],
            "problems": [p.model_dump(mode="json") for p in problems],
        }
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_table(rows))
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
    flagged = any(f in (UNVERIFIED, SILENT) for r in rows for f in r.flags)
    return 1 if args.fail_on_flags and flagged else 0


def _table(rows) -> str:
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
    from ci_budget.render.table import aligned_text

    return aligned_text([head, *body])
