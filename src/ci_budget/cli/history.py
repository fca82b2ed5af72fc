"""`ci-budget history`: measured times kept across runs: add results, show statistics, import
CI job logs, suggest est_time from them."""

from __future__ import annotations

from ci_budget.cli.common import add_group, add_leaf


def add_parser(sub) -> None:
    verbs = add_group(
        sub,
        "history",
        help="keep per-file measured times across runs and suggest est_time from them",
        description="Add run results to a history store and show per (file, suite) statistics "
        "(nearest-rank p50/p90/max over passing runs; timeouts counted and shown as a lower "
        "bound); import them from CI job logs; suggest est_time values from them. Adding the "
        "same results file twice adds nothing.",
        example="ci-budget history add results/*.json --history ci-budget-history.json\n"
        "ci-budget history show --history ci-budget-history.json --suite base-b-test-1-gpu-large",
    )
    add_leaf(
        verbs,
        "add",
        help="add results files (RunResults JSON) to the store",
        description="Add the samples of results files to the store (created when missing).",
        example="ci-budget history add shard-*.json --history ci-budget-history.json",
        use_case=("ci_budget.app.history", "add", "AddOptions"),
    )
    add_leaf(
        verbs,
        "show",
        help="per (file, suite) statistics",
        description="n, p50, p90 and max of passing runs per (file, suite); timeouts counted. "
        "--format markdown adds a picture per series (Mermaid, as GitHub draws it): measured "
        "runs, rolling p50/p90 and est_time over time.",
        example="ci-budget history show --history history.json --format markdown "
        "--file test/registered/x/test_a.py",
        use_case=("ci_budget.app.history", "show", "ShowOptions"),
    )
    _import(verbs)
    _suggest(verbs)
    _watch(verbs)


def _import(verbs) -> None:
    add_leaf(
        verbs,
        "import",
        help="import per-file timings from CI job logs (TIMINGS blocks)",
        description="Read the TIMINGS blocks sglang's run_suite.py prints at the end of every CI "
        "job, from a workflow's completed runs on GitHub (runs -> jobs -> job logs; resumable, "
        "idempotent by job id) or from downloaded logs (--from: a log, a directory, or a run's "
        "log zip). Needs GITHUB_REPOSITORY (or --repo) and GITHUB_TOKEN for GitHub.",
        example="ci-budget history import --workflow pr-test.yml --branch main --since 30d "
        "--job '*-test-* (*)' --history ci-budget-history.json\n"
        "ci-budget history import --from logs/ --history ci-budget-history.json",
        use_case=("ci_budget.app.import_logs", "import_logs", "ImportOptions"),
        token="GitHub token (default: $GITHUB_TOKEN)",
    )


def _suggest(verbs) -> None:
    add_leaf(
        verbs,
        "suggest",
        help="suggest est_time values from measured history",
        description="Suggest est_time = p90 of passing runs x (1 + thresholds.margin), rounded "
        "up to thresholds.round-to (--rule sglang: the p90 itself, as sglang's "
        "update_est_time.py), where the change is at least 30 s and 30 %. --write rewrites only "
        "the est_time literal in each test file; --open-pr BRANCH also commits them on BRANCH, "
        "pushes it and opens or updates one pull request with a table of old, new, measured "
        "and why.",
        example="ci-budget history suggest --history ci-budget-history.json\n"
        "ci-budget history suggest --suite base-b-test-1-gpu-large --write\n"
        "ci-budget history suggest --rule sglang --open-pr ci-budget/est-time",
        use_case=("ci_budget.app.suggest", "suggest", "SuggestOptions"),
        token="GitHub token for --open-pr (default: $GITHUB_TOKEN)",
    )


def _watch(verbs) -> None:
    add_leaf(
        verbs,
        "watch",
        help="watch suites' headroom, step changes and their commits, est_time vs p90",
        description="Per suite: the slowest shard's wall in each run, its trend (Theil-Sen, 95 % "
        "interval), the headroom against its timeout and when the trend crosses it. Per file: "
        "sustained steps of >= 20 % and >= 30 s with the commits between the two runs that "
        "touched the file, a module it imports, or CI (git log in --root); steps shared by "
        "several files at one run boundary as one event. est_time against measured p90. "
        "--format markdown is the body of one tracking issue; --post-issue opens it, or edits "
        "it in place.",
        example="ci-budget history watch sglang-ci-stats/runs --root sglang --format markdown\n"
        "ci-budget history watch --history ci-budget-history.json --format json\n"
        "ci-budget history watch sglang-ci-stats/runs --post-issue",
        use_case=("ci_budget.app.watch", "watch", "WatchOptions"),
        token="GitHub token for --post-issue (default: $GITHUB_TOKEN)",
    )
