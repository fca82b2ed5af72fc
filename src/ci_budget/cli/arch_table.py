"""`ci-budget arch-table`: a file's measured tables, optionally filled with a run's values."""

from __future__ import annotations

from ci_budget.cli.common import add_common, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "arch_table",
        help="print a file's measured tables, filled with values from a run",
        description="Print the measured tables of FILE. With --fill-from, write each row's "
        "value from the results into the column of the run's GPU architecture, keeping the "
        "table's layout: the 'fix reverted' column with --reverted (the run had the fix "
        "switched off), else the 'fix in place' column. A test's value is its record_property "
        "'avg_kl_div', else the last value it printed matching the value pattern "
        "(arch.value-pattern, default 'avg_kl_div=<number>'); rows are matched by name "
        "(docs/arch-tables.md). Values matching no row, rows two tests claim and values "
        "whose rows sit under several fixes are listed, never guessed. "
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
    p.add_argument(
        "--group",
        metavar="FIX",
        help="with --reverted: the fix the run reverted (a group label such as '#34184'); "
        "only its rows are filled",
    )
    p.add_argument("--property", default="avg_kl_div", help="record_property name of the value")
    p.add_argument("--pattern", help="what tests print for the value (default: arch.value-pattern)")
    p.add_argument("--write", action="store_true", help="edit FILE in place")
    return p


def run(args) -> int:
    from ci_budget.app.fill import FillOptions, fill
    from ci_budget.cli.common import settings

    options = FillOptions(
        file=args.file,
        fill_from=args.fill_from,
        arch=args.arch,
        reverted=args.reverted,
        property=args.property,
        write=args.write,
        group=args.group,
        pattern=args.pattern,
    )
    return fill(settings(args), options)
