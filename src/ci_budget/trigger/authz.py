"""What the trigger core knows about an event and who may act on it. Pure.

- Facts: what the core asks the edge for (`Need`), what the edge learned (`Facts`), the one
  reader of payload fields (`get`) and the registry a plan reads (`registrations_for`).
- Who may: the one authorisation every trigger passes. Two kinds of request, each with its own
  grant in `.github/CI_PERMISSIONS.json` (sglang's file: login -> `can_tag_run_ci_label`,
  `cooldown_interval_minutes`, ...; other keys are not read):
  - RUN: the comment command (`/rerun-test`) and `/verify-guard`; granted by
    `cooldown_interval_minutes: 0` (a rerun is never rate-limited, so sglang lets only the
    unthrottled run one);
  - LABEL: a gating label applied by hand; granted by `can_tag_run_ci_label`.
  The order never asks GitHub what the configuration already answers: `deny-users` (never),
  `allow-users` (always), the file's grant, and only then the collaborator permission (one API
  call, asked for with "ask"). Bots are refused by the caller (`is_bot`), before any of this.
  The file is read from the base branch's checkout by the edge, never from the pull request.
- Forks: which pull_request events may start GPU runs, and at which commit. A label approves
  the commit the PR had when it was applied: the `labeled` event's `pull_request.head.sha`. PRs
  from forks run only on that approval (or a /rerun-test): a later push (`synchronize`, or
  `reopened` after pushing to a closed PR) lapses it; plan removes the gating labels so that
  applying one again is the new approval, and says so in one comment that is edited in place.
  Same-repository PRs, whose authors can push to the repository anyway, run on every push while
  labelled. On `pull_request` (not `_target`) the workflow and the action come from the PR's
  merge commit: for a fork that is the fork's code, so nothing it plans can be trusted to start
  a GPU run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ci_budget.config import Config
from ci_budget.models import Plan, Registration
from ci_budget.registry import specs

# --- facts: what the core asks for and what the edge learned ----------------------------------

# The marker key of a refusal ci-budget remembers on a PR, `refused-LOGIN`: `comment` writes it
# in its reply, github.client finds it again (`Facts.refused`).
REFUSED = "refused-"


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


def registrations_for(sha: str, facts: Any, fallback: Sequence[Registration]):
    """The registry at `sha` when the edge reads commits (`facts.read_commits`), else `fallback`
    (the checkout's). Returns ("need", None), (registrations, None) or (None, why)."""
    if not facts.read_commits:
        return list(fallback), None
    if facts.registry_error:
        return None, f"could not read the registrations at `{sha[:12]}`: {facts.registry_error}"
    if facts.registry is None or facts.registry_sha != sha:
        return "need", None
    return facts.registry, None


# --- who may: CI_PERMISSIONS.json, the collaborator permission, bots --------------------------


RUN, LABEL = "run", "label"
PERMISSIONS_FILE = ".github/CI_PERMISSIONS.json"


@dataclass(frozen=True)
class Grant:
    can_tag_run_ci_label: bool = False
    cooldown_interval_minutes: float | None = None  # None: not given


@dataclass(frozen=True)
class Permissions:
    """CI_PERMISSIONS.json as read: grants by login (case-folded, as GitHub compares logins)."""

    source: str = PERMISSIONS_FILE
    users: Mapping[str, Grant] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # entries left out, one line each

    def grant(self, login: str) -> Grant | None:
        return self.users.get(login.lower())


class PermissionsError(ValueError):
    """The file as a whole cannot be used (not a JSON object)."""


def parse_permissions(data: Any, source: str = PERMISSIONS_FILE) -> Permissions:
    """The grants in `data` (the parsed JSON). An entry of the wrong shape is left out with a
    line in `problems` (it grants nothing; everyone else's grants stand)."""
    if not isinstance(data, dict):
        raise PermissionsError(f"{source}: expected a JSON object of logins, not {_kind(data)}")
    users: dict[str, Grant] = {}
    problems: list[str] = []
    for login, entry in data.items():
        why = _entry_problem(entry)
        if why:
            problems.append(f"{source}: {login!r}: {why}; it grants nothing")
            continue
        cooldown = entry.get("cooldown_interval_minutes")
        users[str(login).lower()] = Grant(
            can_tag_run_ci_label=entry.get("can_tag_run_ci_label", False),
            cooldown_interval_minutes=None if cooldown is None else float(cooldown),
        )
    return Permissions(source, users, tuple(problems))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"expected an object, not {_kind(entry)}"
    tag = entry.get("can_tag_run_ci_label", False)
    if not isinstance(tag, bool):
        return f"can_tag_run_ci_label is {_kind(tag)}, not true or false"
    cooldown = entry.get("cooldown_interval_minutes")
    if cooldown is not None:
        if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)):
            return f"cooldown_interval_minutes is {_kind(cooldown)}, not a number"
        if not math.isfinite(cooldown) or cooldown < 0:
            return f"cooldown_interval_minutes is {cooldown}, not a number of minutes >= 0"
    return None


def granted(what: str, grant: Grant | None) -> bool:
    """Whether the file's grant allows `what`."""
    if grant is None:
        return False
    if what == RUN:
        return grant.cooldown_interval_minutes == 0
    return what == LABEL and grant.can_tag_run_ci_label


_NEEDS = {
    RUN: ("runs need", "cooldown_interval_minutes 0"),
    LABEL: ("a gating label counts from", "can_tag_run_ci_label"),
}


def access(what: str, login: str, facts: Any, config: Config) -> str | None:
    """None when `login` may do `what`; "ask" while the collaborator permission is unknown
    (`facts.permission`); else why not. Only the collaborator permission counts from GitHub:
    `author_association` says CONTRIBUTOR for private org members and cannot be trusted."""
    folded = login.lower()
    if folded in {u.lower() for u in config.github.deny_users}:
        return f"{login} is not allowed to trigger runs here"
    if folded in {u.lower() for u in config.github.allow_users}:
        return None
    permissions = getattr(facts, "permissions", None)
    grant = permissions.grant(login) if permissions is not None else None
    if granted(what, grant):
        return None
    if facts.permission_error:
        return f"could not check {login}'s permission: {facts.permission_error}"
    if facts.permission is None:
        return "ask"
    if _level_allowed(facts.permission, config):
        return None
    needs, key = _NEEDS[what]
    levels = " or ".join(config.github.allowed_permissions)
    file_part = f", or {key} in {permissions.source}" if permissions is not None else ""
    return f"{login} has '{facts.permission}' permission; {needs} {levels}{file_part}"


def _level_allowed(permission: str, config: Config) -> bool:
    allowed = set(config.github.allowed_permissions)
    folded = {"maintain": "write", "triage": "read"}.get(permission)
    return permission in allowed or folded in allowed


def definitive(why: str | None) -> bool:
    """A refusal worth remembering on the PR (the person, not GitHub, was the reason)."""
    return why is not None and why not in ("", "ask") and not why.startswith("could not check")


def is_bot(user: Any) -> bool:
    if not isinstance(user, dict):
        return False
    login = user.get("login")
    return user.get("type") == "Bot" or (isinstance(login, str) and login.endswith("[bot]"))


def authorise(login: str, facts: Any, config: Config) -> str | None:
    """None when `login` may run tests (`/rerun-test`), "ask" when the permission is still
    unknown, else why not (`authz.access`)."""
    return access(RUN, login, facts, config)


# --- forks: whether a label still approves the head -------------------------------------------


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
