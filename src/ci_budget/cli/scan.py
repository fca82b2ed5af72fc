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
        help="parse every file completely (also finds syntax errors after the registrations)",
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument(
        "--cache", type=Path, default=None, help="reuse results of unchanged files (a JSON file)"
    )
    return p


def run(args) -> int:
    import json
    import sys

    from ci_budget.cli.common import load
    from ci_budget.registry.parse import select
    from ci_budget.workspace.scan import discover, scan_paths

    root, config = load(args)
    rels = discover(root, config)
    scan = scan_paths(root, rels, config, full=args.full, jobs=args.jobs, cache=args.cache)
    _check_known(scan.registrations, args)
    regs = select(scan, args.suite, args.stage, args.runner_config, args.backend)
    if args.format == "json":
        payload = {
            "registrations": [r.model_dump(mode="json") for r in regs],
            "errors": [p.model_dump(mode="json") for p in scan.errors],
            "warnings": [p.model_dump(mode="json") for p in scan.warnings],
        }
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from ci_budget.render.text import registry_table

        sys.stdout.write(registry_table(regs))
        for problem in scan.errors:
            print(f"error: {problem}", file=sys.stderr)
        for problem in scan.warnings:
            print(f"warning: {problem}", file=sys.stderr)
    return 1 if scan.errors else 0


def _check_known(registrations, args) -> None:
    """An unknown --suite/--stage/--runner-config/--backend is a usage error, as in `run`."""
    from ci_budget.cli.common import CliError

    for flag, attr, values in (
        ("--suite", "suite", args.suite),
        ("--stage", "stage", args.stage),
        ("--runner-config", "runner_config", args.runner_config),
        ("--backend", "backend", args.backend),
    ):
        known = {getattr(r, attr) for r in registrations} - {None}
        for value in values:
            if value not in known:
                names = ", ".join(sorted(known)) or "none registered"
                raise CliError(f"{flag}: unknown {flag[2:]} {value!r} (known: {names})")
