"""What the trigger core asks the edge for (`Need`), what the edge learned (`Facts`), and the
one reader of payload fields. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ci_budget.models import Registration


@dataclass(frozen=True)
class Need:
    what: Literal["permission", "pull", "commits", "registry", "refusals"]
    login: str | None = None
    number: int | None = None
    sha: str | None = None  # registry: the commit whose registrations are read
    page: int | None = None  # refusals: the page of 100 comments holding the newest ones


@dataclass
class Facts:
    """What the edge learned from the environment and GitHub."""

    permission: str | None = None  # admin / maintain / write / triage / read / none
    permission_error: str | None = None
    pull: Any = None  # github.PullInfo: state, head_sha, draft, ... (duck-typed: core stays pure)
    pull_error: str | None = None
    commits: list[str] | None = None  # the PR's commit SHAs, for /rerun-test@SHA
    commits_error: str | None = None
    # The edge can read a commit's registrations as data (git): then the registry that plans a
    # PR run is the approved commit's, never the checkout's.
    read_commits: bool = False
    registry: list[Registration] | None = None
    registry_sha: str | None = None
    registry_error: str | None = None
    sha: str | None = None  # GITHUB_SHA, for workflow_dispatch
    root: str | None = None  # absolute repository root, for absolute specs
    rerun_files: list[str] | None = None  # test files of github.rerun-dirs (with the registry)
    suites: list[str] | None = None  # --suite: override the event
    specs: list[str] | None = None  # --specs: override the event
    weights: dict[tuple[str, str], float] | None = None  # (file, suite) -> measured p90
    model: Any = None  # sharding.model.PartitionModel: per-suite fits for shard counts
    # .github/CI_PERMISSIONS.json of the base branch (trigger.authz.Permissions), if any
    permissions: Any = None
    # Logins (lower case) ci-budget's own earlier replies refused on this PR (found in its
    # newest 100 comments): they are not asked about again.
    refused: set[str] | None = None
    refusals_error: str | None = None


class PayloadError(Exception):
    pass


def get(payload: Any, dotted: str, kind: type | tuple[type, ...]) -> Any:
    node = payload
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            raise PayloadError(f"payload has no {dotted}")
        node = node[key]
    if not isinstance(node, kind) or (kind is int and isinstance(node, bool)):
        raise PayloadError(f"payload {dotted} is {type(node).__name__}, not the expected type")
    return node
