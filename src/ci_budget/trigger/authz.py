"""Who may do what on a pull request: the one authorisation every trigger passes. Pure.

Three kinds of request, each with its own grant in `.github/CI_PERMISSIONS.json` (sglang's
file: login -> `can_tag_run_ci_label`, `can_rerun_failed_ci`, `cooldown_interval_minutes`):

- RUN: `/rerun-test`, `/rerun-group`, `/verify-guard`; granted by `cooldown_interval_minutes: 0`
  (a rerun is never rate-limited, so sglang lets only the unthrottled run one);
- LABEL: a gating label applied by hand, `/tag-run-ci-label`; granted by `can_tag_run_ci_label`;
- RERUN_FAILED: `/rerun-failed-ci`; granted by `can_rerun_failed_ci`, and to the PR's author.

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
from ci_budget.trigger.facts import Need

RUN, LABEL, RERUN_FAILED = "run", "label", "rerun-failed"
PERMISSIONS_FILE = ".github/CI_PERMISSIONS.json"
_KEYS = {"can_tag_run_ci_label": bool, "can_rerun_failed_ci": bool}


@dataclass(frozen=True)
class Grant:
    can_tag_run_ci_label: bool = False
    can_rerun_failed_ci: bool = False
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
            can_rerun_failed_ci=entry.get("can_rerun_failed_ci", False),
            cooldown_interval_minutes=None if cooldown is None else float(cooldown),
        )
    return Permissions(source, users, tuple(problems))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"expected an object, not {_kind(entry)}"
    for key, kind in _KEYS.items():
        if key in entry and not isinstance(entry[key], kind):
            return f"{key} is {_kind(entry[key])}, not true or false"
    cooldown = entry.get("cooldown_interval_minutes")
    if cooldown is not None:
        if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)):
            return f"cooldown_interval_minutes is {_kind(cooldown)}, not a number"
        if not math.isfinite(cooldown) or cooldown < 0:
            return f"cooldown_interval_minutes is {cooldown}, not a number of minutes >= 0"
    return None


def granted(what: str, grant: Grant | None, login: str, author: str | None = None) -> bool:
    """Whether the file's grant (or, for RERUN_FAILED, being the PR's author) allows `what`."""
    if what == RERUN_FAILED and author is not None and login.lower() == author.lower():
        return True
    if grant is None:
        return False
    if what == RUN:
        return grant.cooldown_interval_minutes == 0
    if what == LABEL:
        return grant.can_tag_run_ci_label
    return what == RERUN_FAILED and grant.can_rerun_failed_ci


_NEEDS = {
    RUN: ("runs need", "cooldown_interval_minutes 0"),
    LABEL: ("a gating label counts from", "can_tag_run_ci_label"),
    RERUN_FAILED: ("/rerun-failed-ci needs the PR's author,", "can_rerun_failed_ci"),
}


def access(
    what: str, login: str, facts: Any, config: Config, author: str | None = None
) -> str | None:
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
    if granted(what, grant, login, author):
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


def cooldown_minutes(login: str, facts: Any, config: Config) -> float | str:
    """How long a label from `login` (already allowed) holds off the next one, as sglang's
    pr-gate rates people without write access: 0 for `allow-users` and anyone allowed by the
    collaborator permission alone, else the smaller of `label-cooldown-minutes` and their
    CI_PERMISSIONS.json cooldown, unless the permission (asked: "ask") is write. Unknown
    permission after an error: 0 (a rate limit, not an authorisation)."""
    if login.lower() in {u.lower() for u in config.github.allow_users}:
        return 0.0
    permissions = getattr(facts, "permissions", None)
    grant = permissions.grant(login) if permissions is not None else None
    if grant is None:
        return 0.0
    minutes = config.github.label_cooldown_minutes
    if grant.cooldown_interval_minutes is not None:
        minutes = min(minutes, grant.cooldown_interval_minutes)
    if minutes <= 0 or facts.permission_error:
        return 0.0
    if facts.permission is None:
        return "ask"
    return 0.0 if _level_allowed(facts.permission, config) else minutes


def _level_allowed(permission: str, config: Config) -> bool:
    allowed = set(config.github.allowed_permissions)
    folded = {"maintain": "write", "triage": "read"}.get(permission)
    return permission in allowed or folded in allowed


def cooling(login: str, facts, config) -> Need | str | None:
    """None when a label from `login` may start a run now; the Need for their permission or
    their last labelled run; else why not (sglang's pr-gate cooldown). A failed look-up lets
    the run go: the cooldown rations runners, it authorises nobody."""
    minutes = cooldown_minutes(login, facts, config)
    if minutes == "ask":
        return Need("permission", login=login)
    if not minutes or facts.recent_error:
        return None
    if facts.recent is None:
        return Need("recent", login=login, minutes=minutes)
    if not facts.recent:
        return None
    return (
        f"{login}'s last labelled run started at {facts.recent}; without write access a label "
        f"starts at most one run per {minutes:g} minutes (cooldown_interval_minutes, or "
        "github.label-cooldown-minutes)"
    )


def definitive(why: str | None) -> bool:
    """A refusal worth remembering on the PR (the person, not GitHub, was the reason)."""
    return bool(why) and why != "ask" and not why.startswith("could not check")
