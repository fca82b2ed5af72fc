"""Who may do what on a pull request: the one authorisation every trigger passes. Pure.

Two kinds of request, each with its own grant in `.github/CI_PERMISSIONS.json` (sglang's
file: login -> `can_tag_run_ci_label`, `cooldown_interval_minutes`, ...; other keys are not
read):

- RUN: the comment command (`/rerun-test`) and `/verify-guard`; granted by
  `cooldown_interval_minutes: 0` (a rerun is never rate-limited, so sglang lets only the
  unthrottled run one);
- LABEL: a gating label applied by hand; granted by `can_tag_run_ci_label`.

The order never asks GitHub what the configuration already answers: `deny-users` (never),
`allow-users` (always), the file's grant, and only then the collaborator permission (one API
call, asked for with "ask"). Bots are refused by the caller, before any of this. The file is read
from the base branch's checkout by the edge, never from the pull request.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ci_budget.config import Config

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
