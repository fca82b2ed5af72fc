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


def run(args) -> int:
    from ci_budget.app.check import CheckOptions, check
    from ci_budget.cli.common import settings

    options = CheckOptions(
        files=args.files,
        suites=args.suite,
        arch=args.arch,
        format=args.format,
        fail_on_flags=args.fail_on_flags,
    )
    return check(settings(args), options)
