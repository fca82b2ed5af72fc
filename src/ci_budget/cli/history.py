"""`ci-budget history`: measured times kept across runs: add results, show statistics, suggest
est_time from them."""

from __future__ import annotations

from ci_budget.cli.common import add_group, add_leaf


def add_parser(sub) -> None:
    verbs = add_group(
        sub,
        "history",
        help="keep per-file measured times across runs and suggest est_time from them",
        description="Add run results to a history store and show per (file, suite) statistics "
        "(nearest-rank p50/p90/max over passing runs; timeouts counted and shown as a lower "
        "bound); suggest est_time values from them. Adding the same results file twice adds "
        "nothing.",
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
    _suggest(verbs)
    _watch(verbs)


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
