"""`ci-budget diff`: the static budget report of a PR, est_time against its base (no GPU)."""

from __future__ import annotations

from ci_budget.cli.common import add_leaf


def add_parser(sub) -> None:
    add_leaf(
        sub,
        "diff",
        help="the static budget report: est_time changes against the PR base",
        description="The static report every PR gets, no GPU needed: est_time changes "
        "against --base REF, new and removed files, suite moves, registry errors the PR "
        "introduced, per affected suite the shards and predicted makespan against its timeout, "
        "measured history of the touched files (--history) and the guard-table flags of changed "
        "files. Writes markdown (--out) and a JSON copy next to it, the step summary and "
        "outputs in GitHub Actions, and with --post its own sticky comment (kind 'budget').",
        example='ci-budget diff --base origin/main\nci-budget diff --base "$BASE_SHA" --post',
        use_case=("ci_budget.app.diff", "diff", "DiffOptions"),
        token="GitHub token for --post (default: $GITHUB_TOKEN)",
    )
