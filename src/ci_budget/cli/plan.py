"""`ci-budget plan`: decide what a GitHub event runs, where, and at which commit."""

from __future__ import annotations

from ci_budget.cli.common import add_common, add_history, add_partition_model, add_subcommand


def add_parser(sub):
    p = add_subcommand(
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
        "ci-budget plan --suites base-b-test-1-gpu-large --format json",
    )
    add_common(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--token", default=None, help="GitHub token (default: $GITHUB_TOKEN)")
    p.add_argument(
        "--suites",
        action="append",
        default=None,
        help="run these suites instead of what the event asks (space or comma separated)",
    )
    p.add_argument(
        "--specs",
        action="append",
        default=None,
        help="run these files / file::Class / file::Class::test instead of the event's",
    )
    add_history(p)
    add_partition_model(p)
    p.add_argument("--event-name", default=None, help="default: $GITHUB_EVENT_NAME")
    p.add_argument("--event-path", default=None, help="default: $GITHUB_EVENT_PATH")
    return p


def run(args) -> int:
    from ci_budget.app.plan import PlanOptions, plan
    from ci_budget.cli.common import settings

    options = PlanOptions(
        format=args.format,
        suites=args.suites,
        specs=args.specs,
        history=args.history,
        partition_model=args.partition_model,
    )
    made = settings(args, event_name=args.event_name, event_path=args.event_path)
    return plan(made.check(), options)
