"""Posting a report as the PR's sticky comment, the PR taken from --pr or the event (edge)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from ci_budget.github.retry import GitHubError
from ci_budget.github.sticky import StickyResult


def pr_from_event(env: Mapping[str, str] = os.environ) -> int:
    """The pull request number of the event in GITHUB_EVENT_PATH, or a GitHubError saying why not."""
    path = env.get("GITHUB_EVENT_PATH")
    name = env.get("GITHUB_EVENT_NAME", "event")
    if not path:
        raise GitHubError("no pull request: pass --pr N (GITHUB_EVENT_PATH is not set)")
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.load(fh)
    except (OSError, ValueError, RecursionError) as exc:
        raise GitHubError(f"{path}: cannot read the {name} payload: {exc}") from None
    if isinstance(event.get("pull_request"), dict) and "number" in event["pull_request"]:
        return int(event["pull_request"]["number"])
    issue = event.get("issue")
    if isinstance(issue, dict) and "number" in issue:
        if not issue.get("pull_request"):
            raise GitHubError(f"{path}: {name}: issue #{issue['number']} is not a pull request")
        return int(issue["number"])
    run = event.get("workflow_run")
    if isinstance(run, dict):
        pulls = run.get("pull_requests") or []
        if pulls:
            return int(pulls[0]["number"])
        raise GitHubError(
            f"{path}: {name}: workflow_run.pull_requests is empty (a fork PR, or not a PR run); "
            "pass --pr N"
        )
    raise GitHubError(
        f"{path}: {name}: no pull_request, issue or workflow_run in the payload; pass --pr N"
    )


def post_report(
    markdown: str,
    *,
    kind: str,
    pr: int | None = None,
    token: str | None = None,
    config=None,
    env: Mapping[str, str] = os.environ,
    section: str | None = None,
    client=None,
    stream=None,
) -> StickyResult:
    """Upsert the `kind` sticky comment on the PR (`pr`, else the event's) and say what happened."""
    number = pr if pr is not None else pr_from_event(env)
    if client is None:
        from ci_budget.github.client import client_from_env

        client = client_from_env(env, token=token, config=config)
    result = client.upsert_sticky(number, kind, markdown, section=section)
    where = f"{client.repo_name}#{number}"
    print(
        f"ci-budget: {result.action} the {kind} comment {result.comment_id} on {where} "
        f"({result.calls} API calls)",
        file=stream or sys.stdout,
    )
    return result
