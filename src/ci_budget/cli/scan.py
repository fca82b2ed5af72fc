"""`ci-budget scan`: the registry, by suite or as JSON."""

from __future__ import annotations

from ci_budget.cli.common import add_leaf


def add_parser(sub) -> None:
    add_leaf(
        sub,
        "scan",
        help="list registered test files and registry errors",
        description="Statically scan test files for register_*_ci(...) calls. Errors are "
        "path:line:col and all of them are reported; the exit status is 1 when there are any.",
        example="ci-budget scan --suite base-b-test-1-gpu-large\n"
        "ci-budget scan --format json > registry.json",
        use_case=("ci_budget.app.scan", "scan", "ScanOptions"),
    )
