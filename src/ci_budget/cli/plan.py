"""`ci-budget plan`: decide what a GitHub event runs, where, and at which commit."""

from __future__ import annotations

from ci_budget.cli.common import add_leaf


def _event_flags(p) -> None:
    p.add_argument("--event-name", default=None, help="default: $GITHUB_EVENT_NAME")
    p.add_argument("--event-path", default=None, help="default: $GITHUB_EVENT_PATH")


def add_parser(sub) -> None:
    add_leaf(
        sub,
        "plan",
        help="decide what a GitHub event runs, where and at which commit",
        description="Read the event from the runner environment (GITHUB_EVENT_NAME, "
        "GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_TOKEN, ...) and write should-run, reason, "
        "matrix, head-sha, pr-number and trigger to GITHUB_OUTPUT. A /rerun-test comment is "
        "authorised with the commenter's repository permission and answered on the PR. "
        "Someone else's bad input never fails the step: the exit status is 0 with "
        "should-run=false and the reason.",
        example="GITHUB_EVENT_NAME=issue_comment GITHUB_EVENT_PATH=event.json ci-budget plan\n"
        "ci-budget plan --suite base-b-test-1-gpu-large --format json",
        use_case=("ci_budget.app.plan", "plan", "PlanOptions"),
        token="GitHub token (default: $GITHUB_TOKEN)",
        extra=_event_flags,
    )
