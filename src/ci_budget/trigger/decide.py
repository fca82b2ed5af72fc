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
from typing import Any

from ci_budget.config import Config
from ci_budget.models import MatrixRow, Plan, Registration
from ci_budget.registry import specs
from ci_budget.registry.parse import unknown
from ci_budget.render.escape import inline
from ci_budget.trigger.authz import (
    LABEL,
    Facts,
    Need,
    PayloadError,
    access,
    gate,
    is_bot,
    registrations_for,
)
from ci_budget.trigger.authz import get as _get
from ci_budget.trigger.comment import issue_comment
from ci_budget.trigger.rows import label_rows, spec_rows, suite_rows, summary

PULL_ACTIONS = ("opened", "synchronize", "reopened")


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
        return Plan(reason="no event: GITHUB_EVENT_NAME is not set (give --suite or --specs)")
    try:
        if not isinstance(payload, dict):
            raise PayloadError("payload is not a JSON object")
        if event == "issue_comment":
            return issue_comment(payload, facts, registrations, config)
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
    if action == "labeled":  # the sender vouches for the head: the same gate as a command
        refused = _label_sender(payload, chosen[0], number, facts, config)
        if refused is not None:
            return refused
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
    rows, notes, too_many = label_rows(registrations, chosen, config, facts.weights, facts.model)
    what = ", ".join(f"'{n}'" for n in chosen)
    if too_many:
        return Plan(reason=f"pull_request {action}: label {what} refused: {too_many}",
                    trigger=trigger, **base)  # fmt: skip
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


def _label_sender(payload, label: str, number: int, facts, config) -> Plan | Need | None:
    """None when whoever applied `label` may start runs; the Need for their permission; else
    the Plan that removes the label and says why in the PR's one notice comment. Checked before
    anything of the PR is read."""
    sender = payload.get("sender")
    login = sender.get("login") if isinstance(sender, dict) else None
    why: str | Need | None
    if not isinstance(login, str) or not login:
        why = "the event names no sender"
    elif is_bot(sender):
        why = f"{login} is a bot; labels from bots never start runs"
    else:
        why = access(LABEL, login, facts, config)
        if why == "ask":
            return Need("permission", login=login)
        if why is None:
            return None
    notice = (
        f"**ci-budget**: removed `{label}`: {inline(why)}. A gating label starts GPU runs only "
        "when applied by someone allowed to run them."
    )
    return Plan(
        reason=f"pull_request labeled '{label}': refused: {why}",
        trigger="run-ci",
        pr_number=number,
        notice=notice,
        unlabel=[label],
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
                problems.append(unknown("suite", name, known, show=specs.show))
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
