"""`/rerun-test[@SHA] SPEC…` on a pull request: who may ask, and exactly which commit runs. Pure.

The commit is bound to the comment, never to whatever the branch holds when plan starts:
- `/rerun-test@SHA` runs that commit, given by its full 40-hex SHA, which must be one of the
  PR's commits. A prefix is refused with the head's full SHA in the reply: a prefix names
  whichever commit has it when plan runs, and a second commit sharing a 12-hex prefix is found
  in seconds and can be pushed after the approval;
- plain `/rerun-test` runs the head only when the head is provably older than the comment: the
  head repository's `pushed_at` (GitHub's server time of the last push to any of its branches,
  from pulls/get) is earlier than the comment's `created_at` (an edited comment: its
  `updated_at`). GitHub has no server time of a head's arrival on one PR (the timeline's
  `committed` events carry the pusher's own git dates, `head_ref_force_pushed` covers force
  pushes only, and the PR's `updated_at` moves with every comment), so this repository-wide time
  is the one sound bound. A push after the comment (a force-push included) moves `pushed_at`
  past it, and the command is refused with a reply giving the full-SHA form of the head. Same
  second counts as "not provably older".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ci_budget.config import Config
from ci_budget.models import MatrixRow, Plan, Registration
from ci_budget.registry import specs
from ci_budget.render.escape import code, inline
from ci_budget.trigger.authz import RUN, access

FULL_SHA = 40


def is_bot(user: Any) -> bool:
    if not isinstance(user, dict):
        return False
    login = user.get("login")
    return user.get("type") == "Bot" or (isinstance(login, str) and login.endswith("[bot]"))


def authorise(login: str, facts: Any, config: Config) -> str | None:
    """None when `login` may run tests (`/rerun-test`), "ask" when the permission is still
    unknown, else why not (`authz.access`)."""
    return access(RUN, login, facts, config)


def _time(text: Any) -> datetime | None:
    """GitHub's `2019-05-15T15:20:21Z` (any explicit offset), else None."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


def pinned_commit(command: specs.Command, pull: Any, facts: Any, created_at: Any) -> tuple:
    """("need", None) when the PR's commits must be read first; (sha, None) for the commit to
    run; (None, why) when the command cannot run. `pull` has a head commit (decide checks)."""
    head = pull.head_sha
    number = getattr(pull, "number", "?")
    again = "`" + " ".join([f"{specs.COMMAND}@{head}", *command.specs]) + "`"
    if command.sha:
        if len(command.sha) != FULL_SHA:
            return None, (
                f"`@{command.sha}` has {len(command.sha)} hex digits: a command bound to a "
                f"commit takes its full 40-hex SHA; the head of #{number} is `{head}`: "
                f"comment {again}"
            )
        if facts.commits is None and facts.commits_error is None:
            return "need", None
        if facts.commits_error:
            return None, f"could not list the commits of #{number}: {facts.commits_error}"
        if command.sha not in (c.lower() for c in facts.commits):
            return None, (
                f"`{command.sha}` is not a commit of #{number} (its head is `{head}`; GitHub "
                "lists at most 250 commits of a PR)"
            )
        return command.sha, None
    pushed, asked = _time(getattr(pull, "head_pushed_at", None)), _time(created_at)
    if pushed is not None and asked is not None and pushed < asked:
        return head, None
    when = f"its branch was last pushed at {pushed:%Y-%m-%dT%H:%M:%SZ}" if pushed else "unknown"
    return None, (
        f"the head of #{number}, `{head}`, is not provably older than this comment ({when}); "
        f"to run it, comment {again}"
    )


def spec_rows(
    accepted: Sequence[specs.Resolved], config: Config, prefix: str = "rerun-test"
) -> list[MatrixRow]:
    """One matrix row per runner config, holding every spec that runs there."""
    by_config: dict[str, list[str]] = {}
    for item in accepted:
        for name in item.runner_configs:
            by_config.setdefault(name, []).append(item.spec)
    rows = []
    for name, found in by_config.items():
        runner = config.runner(name)
        assert runner is not None  # specs resolve to configured runners only
        rows.append(
            MatrixRow(
                name=f"{prefix} {name}",
                runner_config=name,
                runs_on=list(runner.runs_on),
                specs=found,
                partition="0/1",
                install=runner.install,
            )
        )
    return rows


def describe_rows(rows: Sequence[MatrixRow]) -> str:
    """One markdown line per row; suite names come from the PR's registrations, so every name
    is a code span that no backtick in it can close (`escape.code`)."""
    out = []
    for row in rows:
        what = (
            ", ".join(code(s, cell=False) for s in row.specs)
            or f"suite {code(row.suite, cell=False)}"
        )
        part = f" shard {row.partition}" if row.partition not in (None, "0/1") else ""
        labels = inline(", ".join(row.runs_on))
        out.append(f"- {code(row.runner_config, cell=False)} (runs-on: {labels}){part}: {what}\n")
    return "".join(out)


def accepted_plan(
    login: str,
    number: int,
    sha: str,
    resolution: specs.Resolution,
    config: Config,
    base: dict,
) -> Plan:
    """The plan for the specs that resolved; the reply also lists the ones refused (they do
    not stop the others, as in sglang's handler) and notes on disabled files."""
    accepted = resolution.accepted
    rows = spec_rows(accepted, config)
    reply = f"@{login} rerunning at `{sha}` (#{number}):\n" + describe_rows(rows)
    reply += "".join(f"- note: {inline(n)}\n" for n in resolution.notes)
    reply += "".join(f"- not run: {inline(why)}\n" for why in resolution.refused)
    count = f"{len(accepted)} spec{'' if len(accepted) == 1 else 's'}"
    left = f"; {len(resolution.refused)} not run" if resolution.refused else ""
    return Plan(
        should_run=True,
        reason=f"/rerun-test by {login}: {count} on "
        f"{', '.join(r.runner_config for r in rows)} at {sha[:10]}{left}",
        matrix=rows,
        head_sha=sha,
        reply=reply,
        reaction="eyes",
        **base,
    )


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
