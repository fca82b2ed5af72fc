"""`ci-budget report`: measured time vs est_time (or, with --base, the static est_time diff)."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_common, add_subcommand

FAIL_ON = ("over", "timeout", "failed", "never")


def add_parser(sub):
    p = add_subcommand(
        sub,
        "report",
        help="compare measured time with est_time and publish the report",
        description="Build the budget report from result files (one per shard, merged) and "
        "the registry. Writes markdown (--out) and a JSON copy next to it, the step summary, "
        "outputs and annotations when running in GitHub Actions, and with --post the PR's "
        "sticky comment. With --base REF, the static est_time report against the PR base.",
        example="ci-budget report --results 'results/*.json' --fail-on over\n"
        "ci-budget report --json-report report.json --format terminal",
    )
    add_common(p)
    p.add_argument(
        "--results",
        action="append",
        default=[],
        metavar="PATH_OR_GLOB",
        help="ci-budget results file or glob (repeatable; shards are merged)",
    )
    p.add_argument(
        "--json-report",
        action="append",
        default=[],
        metavar="FILE",
        help="pytest-json-report file (repeatable)",
    )
    p.add_argument(
        "--format",
        choices=["markdown", "terminal", "json"],
        default=None,
        help="what to print (default: terminal on a tty, else markdown)",
    )
    p.add_argument(
        "--classes",
        choices=["all", "flagged", "none"],
        default="all",
        help="terminal: per-class breakdown for every file, only files not ok, or none "
        "(default: %(default)s)",
    )
    _add_outputs(p)
    return p


def _add_outputs(p) -> None:
    """Where the report goes: the file, the sticky comment, the exit status; --base's inputs."""
    p.add_argument(
        "--out",
        type=Path,
        default=Path("ci-budget-report.md"),
        help="markdown file to write; a .json copy goes next to it (default: %(default)s)",
    )
    p.add_argument("--kind", default="run", help="sticky comment kind (default: %(default)s)")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="never",
        help="exit 1 when any file is over (or timed out) / timed out / failed (or timed out)",
    )
    p.add_argument("--post", action="store_true", help="publish as the PR's sticky comment")
    p.add_argument("--pr", type=int, default=None, help="PR number for --post")
    p.add_argument("--token", default=None, help="GitHub token for --post (default: $GITHUB_TOKEN)")
    p.add_argument(
        "--base", default=None, metavar="REF", help="static report: est_time diff vs REF"
    )
    p.add_argument(
        "--history", type=Path, default=None, metavar="FILE",
        help="timing history store: measured p90 and n per file; with --base also the seconds "
        "shards are predicted on where the partition model has none",
    )  # fmt: skip
    p.add_argument(
        "--partition-model", type=Path, default=None, metavar="FILE",
        help="sglang-ci-stats model.json: per-file est and per-suite fits, as sglang's CI "
        "plans shards (missing or unreadable: a warning, then est_time)",
    )  # fmt: skip
    p.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --base: reuse scan results of files whose git object id it has seen "
        "(a JSON file; created or updated)",
    )


def run(args) -> int:
    from ci_budget.cli.common import settings

    if args.base is not None:
        from ci_budget.app.diff import DiffOptions, diff

        options = DiffOptions(
            base=args.base,
            history=args.history,
            partition_model=args.partition_model,
            out=args.out,
            format=args.format,
            fail_on=args.fail_on,
            post=args.post,
            pr=args.pr,
            cache=args.cache,
        )
        return diff(settings(args), options)
    from ci_budget.app.report import ReportOptions, report

    options = ReportOptions(
        results=args.results,
        json_reports=args.json_report,
        out=args.out,
        kind=args.kind,
        format=args.format,
        classes=args.classes,
        fail_on=args.fail_on,
        post=args.post,
        pr=args.pr,
        history=args.history,
        partition_model=args.partition_model,
    )
    return report(settings(args), options)
