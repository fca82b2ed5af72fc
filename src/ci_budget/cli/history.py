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
        description="n, p50, p90 and max of passing runs per (file, suite); timeouts counted.",
        example="ci-budget history show test/registered/x/test_a.py --store history.json",
    )
    add_common(show)
    show.add_argument("file", nargs="?", type=Path, default=None, metavar="FILE")
    show.add_argument("--store", type=Path, default=None, help=STORE_HELP)
    show.add_argument("--format", choices=["table", "json"], default="table")
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


def _store(args) -> None:
    """Check the config like every command does, and place the default store: at --root when
    one is given, else in the current directory."""
    from ci_budget.cli.common import load

    root, _ = load(args)
    if getattr(args, "store", None) is None and not getattr(args, "file", None):
        args.store = (root if args.root is not None else Path()) / HISTORY_STORE


def run(args) -> int:
    _store(args)
    if args.history_action == "add":
        return _add(args)
    if args.history_action == "import-logs":
        return _import(args)
    return _show(args)


def _import(args) -> int:
    from ci_budget.app.import_logs import ImportOptions, import_logs
    from ci_budget.app.settings import Settings

    options = ImportOptions(
        store=args.store, workflow=args.workflow, from_paths=list(args.from_paths),
        branch=args.branch, since=args.since, max_runs=args.max_runs, jobs=list(args.job),
        suite=args.suite, partition_model=args.partition_model, max_samples=args.max_samples,
        repo=args.repo, reserve=args.reserve,
    )  # fmt: skip
    return import_logs(Settings(token=args.token), options)


def _add(args) -> int:
    import sys

    from ci_budget.cli.common import CliError
    from ci_budget.history.model import HistoryError, load_history, load_results, save_history

    if args.max_samples is not None and args.max_samples < 1:
        raise CliError(f"--max-samples must be at least 1, not {args.max_samples}")
    try:
        history = load_history(args.store, args.max_samples)
    except HistoryError as exc:
        raise CliError(str(exc)) from None
    bad = []
    added = 0
    for path in args.results:
        try:
            results = load_results(path)
        except HistoryError as exc:
            bad.append(str(exc))
            continue
        count = history.add_results(results)
        added += count
        print(f"{path}: {count} new sample(s)")
    # Good files are kept even when others are bad: measured data is never dropped.
    save_history(args.store, history)
    print(f"{args.store}: {added} sample(s) added, {len(history.keys())} (file, suite) series")
    for message in bad:
        print(f"error: {message}", file=sys.stderr)
    return 2 if bad else 0


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def _show(args) -> int:
    import json
    import sys

    from ci_budget.cli.common import CliError
    from ci_budget.history.model import HistoryError, load_history

    if args.file is not None and args.store is not None and args.file != args.store:
        raise CliError("give the store either as FILE or as --store, not both")
    path = args.file or args.store or Path(HISTORY_STORE)
    try:
        history = load_history(path, missing_ok=False)
    except HistoryError as exc:
        raise CliError(str(exc)) from None
    stats = [s for s in history.all_stats() if not args.suite or s.suite in args.suite]
    if args.format == "json":
        json.dump([s.model_dump(mode="json") for s in stats], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    header = ("file", "suite", "runs", "passed", "p50", "p90", "max", "timeouts", "failed")
    rows = [
        (
            s.file,
            s.suite or "(no suite)",
            str(s.runs),
            str(s.n),
            _fmt(s.p50),
            _fmt(s.p90),
            _fmt(s.max),
            f"{s.timeouts} (>= {s.timeout_lower_bound:.0f} s)" if s.timeouts else "0",
            str(s.failed),
        )
        for s in stats
    ]
    from ci_budget.render.table import aligned_text

    sys.stdout.write(aligned_text([header, *rows]))
    if not rows:
        print("(no samples)")
    return 0
