"""A command in a pull request comment, from the `issue_comment` payload to a `Plan`. Pure.

ci-budget answers one command, `/rerun-test[@SHA] SPEC...` (or the word configured as
`github.command`), and its guard check `/verify-guard[@SHA] FILE REF...`. As sglang's handler,
it reads the comment with its format characters (U+200E, U+200B, ...) removed and leading blank
lines skipped, and acts on its first line; the first word must be the command itself (sglang
matches a prefix, so `/rerun-tests` is its `/rerun-test`; here it is no command).

Created and edited comments are read alike (as sglang's handler does), but who is authorised is
whoever wrote the text that acts: the commenter, or on an edit the editor (`sender`), since
anyone with write access may edit another's comment. Nothing about the PR is read before that
person is known to be allowed, and a person refused once on a PR is not asked about again:
ci-budget's own refusal reply, found among the PR's newest 100 comments with one API call, is
the memory (deleting that reply forgets it).

The commit a command runs is bound to the comment (`pinned_commit`), never to whatever the
branch holds when plan starts:
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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ci_budget.config import Config
from ci_budget.models import MatrixRow, Plan, Registration
from ci_budget.registry import specs
from ci_budget.render.blocks import marker_for
from ci_budget.render.escape import code, inline
from ci_budget.trigger.authz import (
    REFUSED,
    Need,
    authorise,
    definitive,
    get,
    is_bot,
    registrations_for,
)
from ci_budget.trigger.rows import (
    GUARD,
    GuardCommand,
    guard_hint,
    guard_plan,
    parse_guard_command,
    spec_rows,
)

PAGE = 100  # comments per page when the edge looks for an earlier refusal


@dataclass
class Request:
    name: str  # the command word (`/rerun-test` or `/verify-guard`), without @SHA
    command: specs.Command  # specs, problems, @SHA
    guard: GuardCommand | None = None

    @property
    def trigger(self) -> str:
        return self.name[1:]


def parse_request(body: str, max_specs: int, word: str = specs.COMMAND) -> Request | None:
    """The command in `body`, or None when the comment gives none. `word` is the run command as
    configured (github.command: `/ci-budget-run` beside a handler of `/rerun-test`)."""
    guard = parse_guard_command(body)
    if guard is not None:
        return Request(GUARD, guard.as_rerun(), guard=guard)
    command = specs.parse_command(body, max_specs, word)
    return None if command is None else Request(specs.COMMAND, command)


@dataclass
class Ask:
    """One command comment: what is asked, by whom, where and when."""

    request: Request
    login: str
    number: int
    comment_id: int
    when: Any  # the comment's created_at, or updated_at for an edit
    comments: int  # comments on the PR when the event was sent

    @property
    def base(self) -> dict:
        return dict(trigger=self.request.trigger, pr_number=self.number, comment_id=self.comment_id)

    def refuse(self, why: str | list[str], facts: Any = None, remember: bool = False) -> Plan:
        """The refusal, answered with a reaction and a reply. A `remember`ed one (the person is
        not allowed) carries the marker later comments are checked against."""
        lines = [why] if isinstance(why, str) else why
        reason = "; ".join(lines)
        guard = self.request.guard
        lines = [guard_hint(w, guard) for w in lines] if guard else lines
        reply = f"@{self.login} `{self.request.name}` refused:\n"
        reply += "".join(f"- {inline(w)}\n" for w in lines)
        once = None
        if remember:
            key = f"{REFUSED}{self.login.lower()}"
            if facts is not None and facts.refused is not None:
                reply = f"{marker_for(key)}\n{reply}"  # none on the PR yet: looked already
            else:
                once = key
        return Plan(reason=reason, reply=reply, reply_once=once, reaction="confused", **self.base)


def issue_comment(payload, facts, registrations, config) -> Plan | Need:
    plan = _issue_comment(payload, facts, registrations, config)
    word = config.github.command
    if word != specs.COMMAND and isinstance(plan, Plan):  # the answers spell its command
        for key in ("reply", "reason"):
            if text := getattr(plan, key):
                setattr(plan, key, text.replace(specs.COMMAND, word))
    return plan


def _issue_comment(payload, facts, registrations, config) -> Plan | Need:
    action = get(payload, "action", str)
    body = get(payload, "comment.body", str)
    # Silent cases: not a new or edited comment, not a command, not on a PR, or from a bot.
    if action not in ("created", "edited"):
        return Plan(reason=f"issue_comment: action '{action}' never triggers a run")
    github = config.github
    request = parse_request(body, github.max_specs, github.command)
    if request is None:
        return Plan(reason=f"issue_comment: not a {github.command} command")
    issue = get(payload, "issue", dict)
    number = get(payload, "issue.number", int)
    if not issue.get("pull_request"):
        return Plan(reason=f"issue_comment: #{number} is an issue, not a pull request")
    if is_bot(payload.get("sender")) or is_bot(payload["comment"].get("user")):
        return Plan(reason="issue_comment: comments by bots never trigger a run")
    edited = action == "edited"
    count = issue.get("comments")
    ask = Ask(
        request,
        login=get(payload, "sender.login" if edited else "comment.user.login", str),
        number=number,
        comment_id=get(payload, "comment.id", int),
        when=payload["comment"].get("updated_at" if edited else "created_at"),
        comments=count if isinstance(count, int) and not isinstance(count, bool) else 0,
    )
    refused = admit(ask, facts, config)
    if refused is not None:
        return refused
    if request.command.problems:
        return ask.refuse(request.command.problems)
    return run_command(ask, facts, registrations, config)


def admit(ask: Ask, facts, config: Config) -> Plan | Need | None:
    """None when `ask.login` may run tests; else what to ask GitHub next, or the refusal."""
    why = authorise(ask.login, facts, config)
    if why is None:
        return None
    if facts.refused is None and facts.refusals_error is None:
        page = max(1, -(-ask.comments // PAGE))
        return Need("refusals", number=ask.number, page=page)
    if facts.refused and ask.login.lower() in facts.refused:
        return Plan(
            reason=f"issue_comment: {ask.login} was refused on #{ask.number} before (ci-budget's "
            f"reply there); `{ask.request.name}` ignored without another check",
            **ask.base,
        )
    if why == "ask":
        return Need("permission", login=ask.login)
    return ask.refuse(why, facts, remember=definitive(why))


def run_command(ask: Ask, facts, registrations, config) -> Plan | Need:
    """`/rerun-test`, `/verify-guard`: the specs at the bound commit."""
    request, command = ask.request, ask.request.command
    files = facts.rerun_files or ()
    if not facts.read_commits:  # the checkout's registry: refuse bad specs before reading the PR
        early = specs.resolve(command.specs, registrations, config, facts.root, files)
        if not early.accepted:
            return ask.refuse(early.refused)
    target = target_commit(command, ask.number, facts, ask.when, registrations)
    if isinstance(target, Need):
        return target
    if isinstance(target, str):
        return ask.refuse(target)
    sha, found = target
    resolution = specs.resolve(command.specs, found, config, facts.root, files)
    # The specs that can run do, as sglang's handler does; the reply lists the rest. A guard
    # verification is of one file: all or nothing.
    if not resolution.accepted or (request.guard and resolution.refused):
        return ask.refuse(resolution.refused)
    plan = accepted_plan(ask.login, ask.number, sha, resolution, config, ask.base)
    return guard_plan(plan, request.guard, ask.login) if request.guard else plan


def open_pull(number: int, facts) -> Any:
    """The open PR with a head (github.PullInfo), the Need to read it, or why not."""
    if facts.pull is None and facts.pull_error is None:
        return Need("pull", number=number)
    if facts.pull_error:
        return f"could not read pull request #{number}: {facts.pull_error}"
    pull = facts.pull
    if getattr(pull, "state", None) != "open":
        return f"pull request #{number} is {getattr(pull, 'state', 'unknown')}"
    if not getattr(pull, "head_sha", None):
        return f"pull request #{number} has no head commit"
    return pull


def target_commit(
    command: specs.Command,
    number: int,
    facts,
    when: Any,
    registrations: Sequence[Registration],
):
    """The commit a command runs and the registrations there, as (sha, registrations); else
    the Need to ask GitHub next, or why it cannot run (the pull request is read only here)."""
    pull = open_pull(number, facts)
    if isinstance(pull, (Need, str)):
        return pull
    sha, why = pinned_commit(command, pull, facts, when)
    if sha == "need":
        return Need("commits", number=number)
    if why:
        return why
    found, why = registrations_for(sha, facts, registrations)
    if found == "need":
        return Need("registry", sha=sha)
    if why:
        return why
    return sha, found


# --- the bound commit and the accepted plan ----------------------------------------------------


FULL_SHA = 40


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
