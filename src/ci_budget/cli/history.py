"""`ci-budget history`: keep measured times across runs (add results files, show statistics)."""

from __future__ import annotations

from pathlib import Path

from ci_budget import HISTORY_STORE
from ci_budget.cli.common import add_common, add_subcommand

STORE_HELP = f"the store (default: {HISTORY_STORE} at --root when given, else here)"


def add_parser(sub):
    p = add_subcommand(
        sub,
        "history",
        help="keep per-file measured times across runs",
        description="Add run results to a history store and show per (file, suite) statistics "
        "(nearest-rank p50/p90/max over passing runs; timeouts counted and shown as a lower "
        "bound). Adding the same results file twice adds nothing.",
        example="ci-budget history add results/*.json --store ci-budget-history.json\n"
        "ci-budget history show --store ci-budget-history.json --suite base-b-test-1-gpu-large",
    )
    actions = p.add_subparsers(dest="history_action", metavar="ACTION", required=True)
    add = add_subcommand(
        actions,
        "add",
        help="add results files (RunResults JSON) to the store",
        description="Add the samples of results files to the store (created when missing).",
        example="ci-budget history add shard-*.json --store ci-budget-history.json",
    )
    add_common(add)
    add.add_argument("results", nargs="+", type=Path, metavar="RESULTS")
    add.add_argument("--store", type=Path, default=None, help=STORE_HELP)
    add.add_argument(
        "--max-samples",
        type=int,
        default=None,
        help="samples kept per (file, suite), newest first (default: the store's, else 50)",
    )
    show = add_subcommand(
        actions,
        "show",
        help="per (file, suite) statistics",
        description="n, p50, p90 and max of passing runs per (file, suite); timeouts counted. "
        "--format markdown adds a picture per series (Mermaid, as GitHub draws it): measured "
        "runs, rolling p50/p90 and est_time over time.",
        example="ci-budget history show --store history.json --format markdown "
        "--file test/registered/x/test_a.py",
    )
    add_common(show)
    show.add_argument(
        "store_file", nargs="?", type=Path, default=None, metavar="STORE",
        help="the store (same as --store)",
    )  # fmt: skip
    show.add_argument("--store", type=Path, default=None, help=STORE_HELP)
    show.add_argument("--format", choices=["table", "json", "markdown"], default="table")
    show.add_argument(
        "--file", dest="files", action="append", default=[], metavar="PATH",
        help="only this test file, as the store names it (repeatable)",
    )  # fmt: skip
    show.add_argument("--suite", action="append", default=[], help="only this suite")
    _add_import(actions)
    return p


def _add_import(actions) -> None:
    imp = add_subcommand(
        actions,
        "import-logs",
        help="import per-file timings from CI job logs (TIMINGS blocks)",
        description="Read the TIMINGS blocks sglang's run_suite.py prints at the end of every CI "
        "job, from a workflow's completed runs on GitHub (runs -> jobs -> job logs; resumable, "
        "idempotent by job id) or from downloaded logs (--from: a log, a directory, or a run's "
        "log zip). Needs GITHUB_REPOSITORY (or --repo) and GITHUB_TOKEN for GitHub.",
        example="ci-budget history import-logs --workflow pr-test.yml --branch main --since 30d "
        "--job '*-test-* (*)' --store ci-budget-history.json\n"
        "ci-budget history import-logs --from logs/ --store ci-budget-history.json",
    )
    imp.add_argument("--workflow", help="workflow file name or id (e.g. pr-test.yml)")
    imp.add_argument("--branch", default=None, help="only runs on this branch (e.g. main)")
    imp.add_argument("--since", default="30d", help="runs created since: Nd or YYYY-MM-DD")
    imp.add_argument("--max-runs", type=int, default=None, help="at most the newest N runs")
    imp.add_argument(
        "--job", action="append", default=[], metavar="GLOB",
        help="only jobs whose name matches (repeatable; default every job)",
    )  # fmt: skip
    imp.add_argument(
        "--from", dest="from_paths", action="append", type=Path, default=[], metavar="PATH",
        help="read downloaded logs instead of GitHub (file, directory or zip; repeatable)",
    )  # fmt: skip
    imp.add_argument("--suite", default=None, help="put every sample in this suite")
    imp.add_argument(
        "--partition-model", type=Path, default=None, metavar="FILE",
        help="sglang-ci-stats model.json: per-file estimates where no sample exists",
    )  # fmt: skip
    add_common(imp)
    imp.add_argument("--store", type=Path, default=None, help=STORE_HELP)
    imp.add_argument("--max-samples", type=int, default=None)
    imp.add_argument("--repo", default=None, help="OWNER/NAME (default: $GITHUB_REPOSITORY)")
    imp.add_argument("--token", default=None, help="GitHub token (default: $GITHUB_TOKEN)")
    imp.add_argument(
        "--reserve", type=int, default=50,
        help="stop (resumably) when this many API requests or fewer remain (default 50)",
    )  # fmt: skip


def run(args) -> int:
    from ci_budget.app import history
    from ci_budget.cli.common import settings

    made = settings(args).check()  # a bad config is an error here as in every command
    if getattr(args, "store", None) is None and not getattr(args, "store_file", None):
        # the default store: at --root when one is given, else in the current directory
        args.store = (made.root if args.root is not None else Path()) / HISTORY_STORE
    if args.history_action == "import-logs":
        return _import(args, made)
    if args.history_action == "add":
        options = history.AddOptions(args.results, args.store, args.max_samples)
        return history.add(made, options)
    if args.store_file is not None and args.store is not None and args.store_file != args.store:
        from ci_budget.app.errors import AppError

        raise AppError("give the store either as STORE or as --store, not both")
    store = args.store_file or args.store
    options = history.ShowOptions(store, args.format, args.suite, list(args.files))
    return history.show(made, options)


def _import(args, made) -> int:
    from ci_budget.app.import_logs import ImportOptions, import_logs

    options = ImportOptions(
        store=args.store, workflow=args.workflow, from_paths=list(args.from_paths),
        branch=args.branch, since=args.since, max_runs=args.max_runs, jobs=list(args.job),
        suite=args.suite, partition_model=args.partition_model, max_samples=args.max_samples,
        repo=args.repo, reserve=args.reserve,
    )  # fmt: skip
    return import_logs(made, options)
