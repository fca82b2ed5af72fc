"""Which pull_request events may start GPU runs, and at which commit. Pure.

A label approves the commit the PR had when it was applied: the `labeled` event's
`pull_request.head.sha`. PRs from forks run only on that approval (or a /rerun-test): a later
push (`synchronize`, or `reopened` after pushing to a closed PR) lapses it; plan removes the
gating labels so that applying one again is the new approval, and says so in one comment that
is edited in place. Same-repository PRs, whose authors can push to the repository anyway, run
on every push while labelled.

On `pull_request` (not `_target`) the workflow and the action come from the PR's merge commit:
for a fork that is the fork's code, so nothing it plans can be trusted to start a GPU run.
"""

from __future__ import annotations

from typing import Any

from ci_budget.models import Plan
from ci_budget.registry import specs

LAPSING = ("opened", "synchronize", "reopened")


def is_fork(payload: dict[str, Any]) -> bool:
    pull = payload.get("pull_request") or {}
    head = (pull.get("head") or {}).get("repo")
    base = (pull.get("base") or {}).get("repo") or {}
    if not isinstance(head, dict):
        return True  # the fork was deleted
    return head.get("full_name") != base.get("full_name")


def gate(event: str, payload: dict, action: str, number: int, sha: str, chosen: list[str]):
    """None when the event may run at `sha`; else the Plan saying why not (and what to do)."""
    if not is_fork(payload):
        return None
    if event == "pull_request":
        return Plan(
            reason=f"pull_request {action}: #{number} is from a fork, and this run executes the "
            "fork's workflow and code: GPU runs for forks start from pull_request_target "
            "(a gating label) or /rerun-test",
            pr_number=number,
        )
    if action not in LAPSING or not chosen:
        return None
    labels = ", ".join(f"`{n}`" for n in chosen)
    notice = (
        f"**ci-budget**: `{sha}` is new on this pull request from a fork. A label approves the "
        f"commit it was applied on, so {labels} no longer runs anything here and was removed. "
        f"To run this commit on the GPU runners, a maintainer applies {labels} again, or "
        f"comments `{specs.COMMAND}@{sha} SPEC…`."
    )
    return Plan(
        reason=f"{event} {action}: #{number} is from a fork and {sha[:10]} was pushed after "
        f"the approval ({', '.join(chosen)}); it needs a new one",
        trigger="pull-request",
        pr_number=number,
        notice=notice,
        unlabel=list(chosen),
    )
