"""`ci-budget arch-table`: a file's measured tables, optionally filled with a run's values."""

from __future__ import annotations

from ci_budget.cli.common import add_common, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "arch_table",
        help="print a file's measured tables, filled with values from a run",
        description="Print the measured tables of FILE. With --fill-from, write each row's "
        "value (record_property 'avg_kl_div') from the results into the column of the run's "
        "GPU architecture, keeping the table's layout: the 'fix reverted' column with "
        "--reverted (the run had the fix switched off), else the 'fix in place' column. "
        "--write edits the table lines of FILE in place.",
        example="ci-budget arch-table test/registered/x/test_kl.py --fill-from results.json\n"
        "ci-budget arch-table test_kl.py --fill-from reverted.json --reverted --write",
    )
    add_common(p)
    p.add_argument("file", help="test file with a measured table in a docstring")
    p.add_argument(
        "--fill-from",
        action="append",
        default=[],
        metavar="RESULTS",
        help="results JSON of a run (repeatable)",
    )
    p.add_argument("--arch", help="architecture of the run (default: the results' detected GPU)")
    p.add_argument(
        "--reverted",
        action="store_true",
        help="the run had the fix reverted: fill the 'fix reverted' column",
    )
    p.add_argument("--property", default="avg_kl_div", help="record_property name of the value")
    p.add_argument("--write", action="store_true", help="edit FILE in place")
    return p


def _load_results(paths):
    from pydantic import ValidationError

    from ci_budget.cli.common import CliError
    from ci_budget.models import RunResults

    out = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                out.append(RunResults.model_validate_json(fh.read()))
        except OSError as exc:
            raise CliError(f"{path}: cannot read: {exc.strerror}") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise CliError(f"{path}: not a results file: {where}: {first['msg']}") from None
    return out


def run(args) -> int:
    import sys

    from ci_budget.arch.flags import attach_measured, fill_source, parse_source
    from ci_budget.arch.table import ArchTableError, normalize_arch
    from ci_budget.cli.arch import _rel
    from ci_budget.cli.common import CliError, load

    root, config = load(args)
    amap = config.gpu_arch_map()
    rel = _rel(root, args.file)
    path = root / rel
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"{args.file}: cannot read: {exc}") from None
    if args.write and not args.fill_from:
        raise CliError("--write needs --fill-from")
    rows, problems, tables = parse_source(source, rel, amap)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not args.fill_from:
        for node, line_map, table in tables:
            lines = node.value.split("\n")
            print(f"{rel}:{line_map[table.first] or node.lineno}:")
            print("\n".join(lines[table.first : table.last + 1]))
        return 0 if tables else 1
    arch = None
    if args.arch:
        arch = normalize_arch(args.arch, amap)
        if arch is None:
            raise CliError(f"--arch {args.arch}: not an architecture or a known GPU name")
    results = _load_results(args.fill_from)
    if arch is None:
        found = {normalize_arch(r.meta.gpu.arch or "", amap) for r in results if r.meta.gpu}
        found.discard(None)
        if len(found) != 1:
            raise CliError("cannot tell the run's architecture from the results; pass --arch")
        arch = found.pop()
    match_problems = []
    attach_measured(rows, results, arch, args.property, match_problems, amap)
    for problem in match_problems:
        print(f"warning: {problem}", file=sys.stderr)
    try:
        new, touched, fill_problems = fill_source(source, rel, rows, arch, args.reverted, amap)
    except ArchTableError as exc:
        raise CliError(str(exc)) from None
    for problem in fill_problems:
        print(f"error: {problem}", file=sys.stderr)
    if not touched:
        print(f"no measured '{args.property}' matched a row of {rel} for {arch}", file=sys.stderr)
        return 1
    for line, lines in touched:
        print(f"{rel}:{line}:")
        print("\n".join(lines))
    if args.write and new != source:
        path.write_text(new, encoding="utf-8")
        print(f"wrote {rel}", file=sys.stderr)
    return 1 if fill_problems else 0
