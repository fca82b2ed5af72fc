"""`ci-budget suggest`: new est_time values from the timing history, optionally written back."""

from __future__ import annotations

from pathlib import Path

from ci_budget import HISTORY_STORE
from ci_budget.cli.common import add_common, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "suggest",
        help="suggest est_time values from measured history",
        description="Suggest est_time = p90 of passing runs x (1 + thresholds.margin), rounded "
        "up to thresholds.round-to, where the change is at least 30 s and 30 %. --write "
        "rewrites only the est_time literal in each test file.",
        example="ci-budget suggest --store ci-budget-history.json\n"
        "ci-budget suggest --suite base-b-test-1-gpu-large --write",
    )
    add_common(p)
    p.add_argument(
        "--store", "--history", type=Path, default=Path(HISTORY_STORE),
        help="history store (--history, as plan, run and report call it, is the same)",
    )  # fmt: skip
    p.add_argument("--suite", action="append", default=[], help="only this suite (repeatable)")
    p.add_argument("--write", action="store_true", help="rewrite est_time in the test files")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument(
        "--min-samples", type=int, default=1, help="passing runs needed for a suggestion"
    )
    p.add_argument(
        "--all", action="store_true",
        help="also list (and with --write, write) changes below the 30 s / 30 %% rule",
    )  # fmt: skip
    p.add_argument(
        "--partition-model", type=Path, default=None, metavar="FILE",
        help="suggest sglang-ci-stats model.json's est as sglang's update_est_time.py writes it "
        "(each line says whether that script's text match finds the registration); no history",
    )  # fmt: skip
    return p


def run(args) -> int:
    from ci_budget.app.suggest import SuggestOptions, suggest
    from ci_budget.cli.common import settings

    options = SuggestOptions(
        store=args.store,
        suites=args.suite,
        write=args.write,
        format=args.format,
        min_samples=args.min_samples,
        include_all=args.all,
        partition_model=args.partition_model,
    )
    return suggest(settings(args), options)
