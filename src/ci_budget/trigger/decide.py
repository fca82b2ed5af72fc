"""What a GitHub event runs, where, and at which commit. Pure.

`decide` reads the event payload and returns either a `Plan` or a `Need`: the one fact it needs
from GitHub next (the commenter's permission, the pull request, its commits, the registry at the
approved commit). The edge fetches it, puts it
in `Facts` and calls again. So the order of API calls is decided here: nothing about a PR is read
before the commenter is known to be allowed.

Every problem with the event becomes a `Plan` with `should_run=False` and a reason naming the
event and what is wrong; nothing here raises on someone else's input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ci_budget.config import Config
from ci_budget.models import MatrixRow, Plan, Registration
from ci_budget.registry import specs
from ci_budget.trigger.approval import gate
from ci_budget.trigger.guard_command import COMMAND as GUARD_COMMAND
from ci_budget.trigger.guard_command import guard_hint, guard_plan, parse_guard_command
from ci_budget.trigger.rerun import (  # noqa: F401 - authorise, spec_rows: this module's API
    accepted_plan,
    authorise,
    describe_rows,
    is_bot,
    pinned_commit,
    registrations_for,
    spec_rows,
)
from ci_budget.trigger.rows import suite_rows, summary

PULL_ACTIONS = ("opened", "synchronize", "reopened")


@dataclass(frozen=True)
class Need:
    what: Literal["permission", "pull", "commits", "registry"]
    login: str | None = None
    number: int | None = None
    sha: str | None = None  # registry: the commit whose registrations are read


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
    suites: list[str] | None = None  # --suites: override the event
    specs: list[str] | None = None  # --specs: override the event
    weights: dict[tuple[str, str], float] | None = None  # (file, suite) -> measured p90
    model: Any = None  # sharding.model.PartitionModel: per-suite fits for shard counts


class PayloadError(Exception):
    pass


def _get(payload: Any, dotted: str, kind: type | tuple[type, ...]) -> Any:
    node = payload
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            raise PayloadError(f"payload has no {dotted}")
        node = node[key]
    if not isinstance(node, kind) or (kind is int and isinstance(node, bool)):
        raise PayloadError(f"payload {dotted} is {type(node).__name__}, not the expected type")
    return node


def split_list(text: str) -> list[str]:
    """`a b,c` -> [a, b, c] (workflow_dispatch inputs are space or comma separated)."""
    return [t for t in text.replace(",", " ").split() if t]


def decide(
    event: str | None,
    payload: Any,
    facts: Facts,
    registrations: Sequence[Registration],
    config: Config,
) -> Plan | Need:
    if facts.suites is not None or facts.specs is not None:
        return _run_inputs(facts.suites or [], facts.specs or [], facts, registrations, config)
    if not event:
        return Plan(reason="no event: GITHUB_EVENT_NAME is not set (give --suites or --specs)")
    try:
        if not isinstance(payload, dict):
            raise PayloadError("payload is not a JSON object")
        if event == "issue_comment":
            return _issue_comment(payload, facts, registrations, config)
        if event in ("pull_request", "pull_request_target"):
            return _pull_request(event, payload, facts, registrations, config)
        if event == "workflow_dispatch":
            inputs = payload.get("inputs") or {}
            if not isinstance(inputs, dict):
                raise PayloadError("payload inputs is not an object")
            suites, spec_text = inputs.get("suites") or "", inputs.get("specs") or ""
            if not isinstance(suites, str) or not isinstance(spec_text, str):
                raise PayloadError("inputs.suites and inputs.specs must be strings")
            return _run_inputs(
                split_list(suites), split_list(spec_text), facts, registrations, config
            )
    except PayloadError as exc:
        return Plan(reason=f"{event}: malformed event: {exc}")
    return Plan(reason=f"{event}: not an event ci-budget plans runs for")


# --- /rerun-test -------------------------------------------------------------------------


def _issue_comment(payload, facts, registrations, config) -> Plan | Need:
    action = _get(payload, "action", str)
    body = _get(payload, "comment.body", str)
    # Silent cases: not a new comment, not a command, not on a PR, or from a bot.
    if action != "created":
        return Plan(reason=f"issue_comment: action '{action}' never triggers a run")
    guard = parse_guard_command(body)  # one gate for both commands
    command = guard.as_rerun() if guard else specs.parse_command(body, config.github.max_specs)
    if command is None:
        return Plan(reason="issue_comment: not a /rerun-test command")
    issue = _get(payload, "issue", dict)
    number = _get(payload, "issue.number", int)
    if not issue.get("pull_request"):
        return Plan(reason=f"issue_comment: #{number} is an issue, not a pull request")
    if is_bot(payload.get("sender")) or is_bot(payload["comment"].get("user")):
        return Plan(reason="issue_comment: comments by bots never trigger a run")
    login = _get(payload, "comment.user.login", str)
    comment_id = _get(payload, "comment.id", int)
    name = GUARD_COMMAND if guard else specs.COMMAND
    base = dict(trigger=name[1:], pr_number=number, comment_id=comment_id)

    def refuse(why: str | list[str]) -> Plan:
        lines = [why] if isinstance(why, str) else why
        reason = "; ".join(lines)
        lines = [guard_hint(w, guard) for w in lines] if guard else lines
        reply = f"@{login} `{name}` refused:\n" + "".join(f"- {w}\n" for w in lines)
        # One reply per person and PR; later refusals get the reaction only.
        once = f"refused-{login.lower()}"
        return Plan(reason=reason, reply=reply, reply_once=once, reaction="confused", **base)

    why_not = authorise(login, facts, config)
    if why_not == "ask":
        return Need("permission", login=login)
    if why_not:
        return refuse(why_not)
    if command.problems:
        return refuse(command.problems)
    files = facts.rerun_files or ()
    if not facts.read_commits:  # the checkout's registry: refuse bad specs before reading the PR
        early = specs.resolve(command.specs, registrations, config, facts.root, files)
        if not early.accepted:
            return refuse(early.refused)
    target = _target(command, number, facts, payload, registrations)
    if isinstance(target, Need):
        return target
    if isinstance(target, str):
        return refuse(target)
    sha, found = target
    resolution = specs.resolve(command.specs, found, config, facts.root, files)
    if not resolution.accepted or (guard and resolution.refused):
        return refuse(resolution.refused)
    plan = accepted_plan(login, number, sha, resolution, config, base)
    return guard_plan(plan, guard, login) if guard else plan


def _target(command, number, facts, payload, registrations):
    """The commit a command runs and the registrations there, as (sha, registrations); else
    the Need to ask GitHub next, or why it cannot run (the pull request is read only here)."""
    if facts.pull is None and facts.pull_error is None:
        return Need("pull", number=number)
    if facts.pull_error:
        return f"could not read pull request #{number}: {facts.pull_error}"
    pull = facts.pull
    if getattr(pull, "state", None) != "open":
        return f"pull request #{number} is {getattr(pull, 'state', 'unknown')}"
    if not getattr(pull, "head_sha", None):
        return f"pull request #{number} has no head commit"
    sha, why = pinned_commit(command, pull, facts, payload["comment"].get("created_at"))
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


# --- labels and pull request updates ---------------------------------------------------------


def _pull_request(event, payload, facts, registrations, config) -> Plan | Need:
    action = _get(payload, "action", str)
    number = _get(payload, "pull_request.number", int)
    sha = _get(payload, "pull_request.head.sha", str)
    labels = [
        label.get("name")
        for label in _get(payload, "pull_request.labels", list)
        if isinstance(label, dict)
    ]
    gating = config.github.gating_labels
    base = dict(pr_number=number, head_sha=sha)
    picked = _gating_labels(payload, action, number, labels, gating, base)
    if isinstance(picked, Plan):
        return picked
    chosen, trigger = picked
    if _get(payload, "pull_request.draft", (bool, type(None))) and not config.github.run_drafts:
        return Plan(reason=f"pull_request {action}: #{number} is a draft", **base)
    if _get(payload, "pull_request.state", str) != "open":
        return Plan(reason=f"pull_request {action}: #{number} is not open", **base)
    refused = gate(event, payload, action, number, sha, chosen)
    if refused is not None:
        return refused
    if event == "pull_request_target":  # base-branch code: the PR's registry is read as data
        found, why = registrations_for(sha, facts, registrations)
        if found == "need":
            return Need("registry", sha=sha)
        if why:
            return Plan(reason=f"{event} {action}: {why}", trigger=trigger, pr_number=number)
        registrations = found
    patterns = _stages(chosen, gating)
    rows, notes = suite_rows(registrations, config, facts.weights, patterns, facts.model)
    what = ", ".join(f"'{n}'" for n in chosen)
    if not rows:
        return Plan(
            reason=f"pull_request {action}: label {what} gates no runnable suite"
            + (f" ({'; '.join(notes)})" if notes else ""),
            trigger=trigger,
            **base,
        )
    return Plan(
        should_run=True,
        reason=f"pull_request {action}: label {what}: {summary(rows)}"
        + (f" ({'; '.join(notes)})" if notes else ""),
        trigger=trigger,
        matrix=rows,
        **base,
    )


def _gating_labels(payload, action, number, labels, gating, base) -> Plan | tuple[list, str]:
    """(the gating labels that run, the trigger) for a pull_request action, or the Plan that
    says why it runs nothing."""
    if action == "labeled":
        label = _get(payload, "label.name", str)
        if label not in gating:
            return Plan(reason=f"pull_request labeled '{label}': not a gating label", **base)
        return [label], "run-ci"
    if action in PULL_ACTIONS:
        chosen = [name for name in labels if name in gating]
        if not chosen:
            return Plan(
                reason=f"pull_request {action}: #{number} carries no gating label "
                f"({', '.join(gating) or 'none configured'})",
                **base,
            )
        return chosen, "pull-request"
    return Plan(reason=f"pull_request {action}: never triggers a run", **base)


def _stages(chosen: list[str], gating) -> list[str] | None:
    """The stage patterns the chosen labels gate; None: every stage."""
    patterns: list[str] = []
    for name in chosen:
        if not gating[name]:
            return None  # an empty list gates every stage
        patterns.extend(s for s in gating[name] if s not in patterns)
    return patterns


# --- workflow_dispatch and the command line ---------------------------------------------------


def _run_inputs(
    suite_names: list[str],
    spec_list: list[str],
    facts: Facts,
    registrations: Sequence[Registration],
    config: Config,
) -> Plan:
    base = dict(trigger="dispatch", head_sha=facts.sha)
    if not suite_names and not spec_list:
        return Plan(reason="workflow_dispatch: no suites or specs given", **base)
    problems: list[str] = []
    rows: list[MatrixRow] = []
    if len(spec_list) > config.github.max_specs:
        problems.append(f"{len(spec_list)} specs given; at most {config.github.max_specs}")
    elif spec_list:
        files = facts.rerun_files or ()
        resolution = specs.resolve(spec_list, registrations, config, facts.root, files)
        problems.extend(resolution.refused)
        rows.extend(spec_rows(resolution.accepted, config, "specs"))
    if suite_names:
        known = {r.suite for r in registrations}
        for name in suite_names:
            if name not in known:
                problems.append(f"{specs.show(name)}: not a registered suite")
        # Named explicitly, so nightly suites run too; `wanted` holds only the named suites.
        wanted = [r for r in registrations if r.suite in suite_names]
        found, notes = suite_rows(
            [r.model_copy(update={"nightly": False}) for r in wanted],
            config,
            facts.weights,
            model=facts.model,
        )
        problems.extend(notes)
        rows.extend(found)
    if problems:
        return Plan(reason="workflow_dispatch refused: " + "; ".join(problems), **base)
    if not rows:
        return Plan(reason="workflow_dispatch: nothing runnable in the given suites", **base)
    return Plan(should_run=True, reason=f"workflow_dispatch: {summary(rows)}", matrix=rows, **base)
