"""`ci-budget scan`: the registry, by suite or as JSON."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_common, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "scan",
        help="list registered test files and registry errors",
        description="Statically scan test files for register_*_ci(...) calls. Errors are "
        "path:line:col and all of them are reported; the exit status is 1 when there are any.",
        example="ci-budget scan --suite base-b-test-1-gpu-large\n"
        "ci-budget scan --format json > registry.json",
    )
    add_common(p)
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--suite", action="append", default=[], help="only this suite (repeatable)")
    p.add_argument("--stage", action="append", default=[], help="only this stage (repeatable)")
    p.add_argument("--runner-config", action="append", default=[], help="only this runner config")
    p.add_argument(
        "--backend", action="append", default=[], help="only this backend (cuda, cpu, ...)"
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="parse every file completely (also finds syntax errors outside the registrations)",
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument(
        "--cache", type=Path, default=None, help="reuse results of unchanged files (a JSON file)"
    )
    return p


def run(args) -> int:
    from ci_budget.app.scan import ScanOptions, scan
    from ci_budget.cli.common import settings

    options = ScanOptions(
        format=args.format,
        suites=args.suite,
        stages=args.stage,
        runner_configs=args.runner_config,
        backends=args.backend,
        full=args.full,
        jobs=args.jobs,
        cache=args.cache,
    )
    return scan(settings(args), options)
