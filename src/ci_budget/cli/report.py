"""`ci-budget report`: measured time against est_time, from one or more shards' results."""

from __future__ import annotations

from ci_budget.cli.common import add_leaf


def add_parser(sub) -> None:
    add_leaf(
        sub,
        "report",
        help="compare measured time with est_time and publish the report",
        description="Build the budget report from result files (one per shard, merged) and "
        "the registry. Writes markdown (--out) and a JSON copy next to it, the step summary, "
        "outputs and annotations when running in GitHub Actions, and with --post the PR's "
        "sticky comment. The static report against the PR base is `ci-budget diff`. "
        "--report-json publishes a report JSON another job wrote (untrusted: validated as "
        "--kind and rendered again; on workflow_run the PR is looked up from the run's head).",
        example="ci-budget report --results 'results/*.json' --fail-on over\n"
        "ci-budget report --json-report report.json --format text\n"
        "ci-budget report --report-json artifact/ci-budget-report.json --kind budget --post",
        use_case=("ci_budget.app.report", "report", "ReportOptions"),
        token="GitHub token for --post (default: $GITHUB_TOKEN)",
    )
