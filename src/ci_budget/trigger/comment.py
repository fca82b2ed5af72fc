"""A command in a pull request comment, from the `issue_comment` payload to a `Plan`. Pure.

Created and edited comments are read alike (as sglang's handler does), but who is authorised is
whoever wrote the text that acts: the commenter, or on an edit the editor (`sender`), since
anyone with write access may edit another's comment. Nothing about the PR is read before that
person is known to be allowed, and a person refused once on a PR is not asked about again:
ci-budget's own refusal reply, found among the PR's newest 100 comments with one API call, is
the memory (deleting that reply forgets it).

The commit a command runs is bound to the comment (`rerun.pinned_commit`): `@SHA` is the full
40-hex SHA of one of the PR's commits; without it, the head, only when provably older than the
comment (or, for an edit, than the edit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ci_budget.config import Config
from ci_budget.models import Plan, Registration
from ci_budget.registry import specs
from ci_budget.render.escape import inline
from ci_budget.render.sticky import marker_for
from ci_budget.trigger.authz import LABEL, RERUN_FAILED, access, cooling, definitive
from ci_budget.trigger.commands import (
    RERUN_FAILED_CI,
    RERUN_GROUP,
    TAG,
    TAG_AND_RERUN,
    Request,
    group_specs,
    parse_request,
)
from ci_budget.trigger.facts import Need, get
from ci_budget.trigger.guard_command import guard_hint, guard_plan
from ci_budget.trigger.limits import label_rows, tag_labels
from ci_budget.trigger.rerun import (
    accepted_plan,
    describe_rows,
    is_bot,
    pinned_commit,
    registrations_for,
)
from ci_budget.trigger.rows import summary

PAGE = 100  # comments per page when the edge looks for an earlier refusal


@dataclass
class Ask:
    """One command comment: what is asked, by whom, where and when."""

    request: Request
    login: str
    number: int
    comment_id: int
    when: Any  # the comment's created_at, or updated_at for an edit
    author: str | None  # the PR's author
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
            key = f"refused-{self.login.lower()}"
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
    request = parse_request(body, github.max_specs, github.command, tuple(github.foreign_commands))
    if request is None:
        return Plan(reason=f"issue_comment: not a {github.command} command")
    issue = get(payload, "issue", dict)
    number = get(payload, "issue.number", int)
    if not issue.get("pull_request"):
        return Plan(reason=f"issue_comment: #{number} is an issue, not a pull request")
    if is_bot(payload.get("sender")) or is_bot(payload["comment"].get("user")):
        return Plan(reason="issue_comment: comments by bots never trigger a run")
    edited = action == "edited"
    count, user = issue.get("comments"), issue.get("user")
    ask = Ask(
        request,
        login=get(payload, "sender.login" if edited else "comment.user.login", str),
        number=number,
        comment_id=get(payload, "comment.id", int),
        when=payload["comment"].get("updated_at" if edited else "created_at"),
        author=user.get("login") if isinstance(user, dict) else None,
        comments=count if isinstance(count, int) and not isinstance(count, bool) else 0,
    )
    allowed = admit(ask, facts, config)
    if not isinstance(allowed, list):
        return allowed
    if request.command.problems:
        return ask.refuse(request.command.problems)
    if request.name in (TAG, TAG_AND_RERUN, RERUN_FAILED_CI):
        return tag_or_rerun(ask, allowed, facts, registrations, config)
    return run_command(ask, facts, registrations, config)


def admit(ask: Ask, facts, config: Config) -> list[str] | Plan | Need:
    """The kinds of request (authz.RUN, LABEL, RERUN_FAILED) `ask.login` may make, or what to
    ask GitHub next, or the refusal."""
    answers = {w: access(w, ask.login, facts, config, ask.author) for w in ask.request.needs}
    allowed = [w for w, why in answers.items() if why is None]
    if allowed:
        return allowed
    if facts.refused is None and facts.refusals_error is None:
        page = max(1, -(-ask.comments // PAGE))
        return Need("refusals", number=ask.number, page=page)
    if facts.refused and ask.login.lower() in facts.refused:
        return Plan(
            reason=f"issue_comment: {ask.login} was refused on #{ask.number} before (ci-budget's "
            f"reply there); `{ask.request.name}` ignored without another check",
            **ask.base,
        )
    if "ask" in answers.values():
        return Need("permission", login=ask.login)
    why = next(iter(answers.values()))
    return ask.refuse(why, facts, remember=definitive(why))


def run_command(ask: Ask, facts, registrations, config) -> Plan | Need:
    """`/rerun-test`, `/verify-guard`, `/rerun-group`: the specs at the bound commit."""
    request, command = ask.request, ask.request.command
    group = request.name == RERUN_GROUP
    files = facts.rerun_files or ()
    if not facts.read_commits:  # the checkout's registry: refuse bad specs before reading the PR
        wanted, refused = _wanted(request, registrations, config)
        if not refused:
            early = specs.resolve(wanted, registrations, config, facts.root, files)
            refused = [] if early.accepted else early.refused
        if refused:
            return ask.refuse(refused)
    target = target_commit(command, ask.number, facts, ask.when, registrations)
    if isinstance(target, Need):
        return target
    if isinstance(target, str):
        return ask.refuse(target)
    sha, found = target
    wanted, refused = _wanted(request, found, config)
    if refused:
        return ask.refuse(refused)
    resolution = specs.resolve(wanted, found, config, facts.root, files)
    # The specs (a group's files) that can run do, as sglang's handler does; the reply lists
    # the rest. A guard verification is of one file: all or nothing.
    if not resolution.accepted or (request.guard and resolution.refused):
        return ask.refuse(resolution.refused)
    plan = accepted_plan(ask.login, ask.number, sha, resolution, config, ask.base)
    if group:
        head, sep, left = plan.reason.removeprefix(specs.COMMAND).partition("; ")
        plan.reason = f"{RERUN_GROUP}{head} ({', '.join(request.groups)}){sep}{left}"
    return guard_plan(plan, request.guard, ask.login) if request.guard else plan


def _wanted(request: Request, registrations, config) -> tuple[list[str], list[str]]:
    if request.name != RERUN_GROUP:
        return request.command.specs, []
    return group_specs(request.groups, registrations, config.test_root)


def tag_or_rerun(ask: Ask, allowed: list[str], facts, registrations, config) -> Plan | Need:
    """`/tag-run-ci-label`, `/tag-and-rerun-ci`, `/rerun-failed-ci`, each part as allowed."""
    pull = open_pull(ask.number, facts)
    if isinstance(pull, (Need, str)):
        return pull if isinstance(pull, Need) else ask.refuse(pull)
    rerun = pull.head_sha if RERUN_FAILED in allowed else None
    if LABEL not in allowed:
        return Plan(
            reason=f"{ask.request.name} by {ask.login}: rerunning the failed and skipped "
            f"workflow runs at {pull.head_sha[:10]}",
            rerun_failed=rerun,
            **{**ask.base, "trigger": "rerun-failed-ci"},
        )
    labels = tag_labels(config, ask.request.extra)
    retry = f"`{ask.request.name}` again, or apply `{labels[0]}` by hand"
    target = target_commit(specs.Command([]), ask.number, facts, ask.when, registrations, retry)
    if isinstance(target, (Need, str)):
        return target if isinstance(target, Need) else ask.refuse(target)
    sha, found = target
    wait = cooling(ask.login, facts, config)  # the one who asks for the label, as by hand
    if isinstance(wait, Need):
        return wait
    if wait:
        return ask.refuse(wait)
    done = dict(add_labels=labels, rerun_failed=rerun, rerun_skip_own=True, head_sha=sha)
    what = ", ".join(f"`{n}`" for n in labels)
    if pull.draft and not config.github.run_drafts:
        return Plan(reason=f"{ask.request.name}: #{ask.number} is a draft; labelled {what}",
                    reaction="+1", **done, **ask.base)  # fmt: skip
    chosen = [n for n in labels if n in config.github.gating_labels]
    rows, notes, why = label_rows(found, chosen, config, facts.weights, facts.model)
    if why:
        return ask.refuse(why)
    said = f"{summary(rows)}" if rows else "no runnable suite"
    said += f" ({'; '.join(notes)})" if notes else ""
    reply = f"@{ask.login} labelled {what} at `{sha}` (#{ask.number}): {inline(said)}\n"
    return Plan(
        should_run=bool(rows),
        reason=f"{ask.request.name} by {ask.login}: {said} at {sha[:10]}",
        matrix=rows,
        reply=reply + describe_rows(rows),
        reaction="+1",
        **done,
        **ask.base,
    )


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
    retry: str | None = None,
):
    """The commit a command runs and the registrations there, as (sha, registrations); else
    the Need to ask GitHub next, or why it cannot run (the pull request is read only here)."""
    pull = open_pull(number, facts)
    if isinstance(pull, (Need, str)):
        return pull
    sha, why = pinned_commit(command, pull, facts, when, retry)
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
