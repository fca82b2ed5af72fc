"""Who may start runs with a gating label (`decide._label_sender`), and dispatch specs in the
rerun directories. Pure unit tests: they are in the mutation-test selection."""

from __future__ import annotations

import pytest

from ci_budget.config import Config, parse_config
from ci_budget.models import Plan
from ci_budget.trigger.authz import Facts, Need, parse_permissions
from ci_budget.trigger.decide import _label_sender, decide

TAIL = ". A gating label starts GPU runs only when applied by someone allowed to run them."


def refused(why: str, notice_why: str | None = None) -> Plan:
    """The Plan that removes `run-ci` from PR #7 because of `why`."""
    return Plan(
        reason=f"pull_request labeled 'run-ci': refused: {why}",
        trigger="run-ci",
        pr_number=7,
        notice=f"**ci-budget**: removed `run-ci`: {notice_why or why}{TAIL}",
        unlabel=["run-ci"],
    )


def sender(payload, facts=None, config=None):
    return _label_sender(payload, "run-ci", 7, facts or Facts(), config or Config())


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"sender": None},
        {"sender": "octocat"},
        {"sender": {"login": ""}},
        {"sender": {"login": 7}},
    ],
)
def test_a_label_from_no_named_sender_is_removed(payload):
    assert sender(payload, Facts(permission="admin")) == refused("the event names no sender")


@pytest.mark.parametrize("login", ["renovate[bot]", "XXXX", "ci-BUDGET[bot]"])
def test_a_bot_label_is_removed_whatever_its_permission(login):
    # "XXXX" is a Bot by type; ci-budget's own identity labels nothing, and is a bot too.
    ours = parse_config({"github": {"comment-login": "Ci-Budget[bot]"}}, "t")
    payload = {"sender": {"login": login, "type": "Bot"}}
    why = f"{login} is a bot; labels from bots never start runs"
    assert sender(payload, Facts(permission="admin"), ours) == refused(
        why, why.replace("[bot]", "\\[bot\\]")
    )


def test_a_person_is_asked_about_then_allowed_or_refused_by_permission():
    payload = {"sender": {"login": "a", "type": "User"}}
    assert sender(payload) == Need("permission", login="a")
    assert sender(payload, Facts(permission="write")) is None
    why = "a has 'read' permission; a gating label counts from admin or write"
    assert sender(payload, Facts(permission="read")) == refused(why)


def test_a_granted_label_counts_without_asking_and_is_never_rationed():
    grants = parse_permissions(
        {"a": {"can_tag_run_ci_label": True, "cooldown_interval_minutes": 60}}
    )
    payload = {"sender": {"login": "a", "type": "User"}}
    assert sender(payload, Facts(permissions=grants)) is None  # no permission call
    assert sender(payload, Facts(permission="read", permissions=grants)) is None
    other = {"sender": {"login": "b", "type": "User"}}
    assert sender(other, Facts(permissions=grants)) == Need("permission", login="b")


def test_dispatch_specs_may_name_unregistered_files_of_the_rerun_dirs():
    config = parse_config(
        {"github": {"rerun-dirs": {"test/manual": {"runner": "1-gpu-large"}}}}, "t"
    )
    path = "test/manual/test_x.py"
    facts = Facts(specs=[path], rerun_files=[path], sha="a" * 40)
    plan = decide(None, None, facts, [], config)
    assert plan.should_run and plan.head_sha == "a" * 40
    assert [(r.runner_config, r.specs) for r in plan.matrix] == [("1-gpu-large", [path])]


def test_a_label_from_a_reader_is_removed_from_the_pr_it_was_put_on():
    """Through `decide`: the refusal names the label that was applied and the PR that carries
    it, so the edge removes the right label from the right PR."""
    from tests.trigger.test_decide import REGS, pull_event

    data = pull_event("labeled", number=41)
    data["sender"] = {"login": "a", "type": "User"}
    plan = decide("pull_request", data, Facts(permission="read"), REGS, Config())
    why = "a has 'read' permission; a gating label counts from admin or write"
    assert plan == Plan(
        reason=f"pull_request labeled 'run-ci': refused: {why}",
        trigger="run-ci",
        pr_number=41,
        notice=f"**ci-budget**: removed `run-ci`: {why}{TAIL}",
        unlabel=["run-ci"],
    )


@pytest.mark.parametrize("action", ["labeled", "synchronize"])
def test_a_label_over_the_job_cap_is_refused_with_the_numbers(action):
    """The cap's refusal reaches the plan outputs whole: its reason (with the counts and the
    setting), its trigger, and the PR and head it was decided for."""
    from tests.trigger.test_decide import REGS, pull_event

    data = pull_event(action, number=41)
    data["sender"] = {"login": "a", "type": "User"}
    config = parse_config({"github": {"label-max-jobs": 1}}, "t")
    plan = decide("pull_request", data, Facts(permission="write"), REGS, config)
    trigger = "run-ci" if action == "labeled" else "pull-request"
    head = data["pull_request"]["head"]["sha"]
    assert plan == Plan(
        reason=f"pull_request {action}: label 'run-ci' refused: 3 jobs planned (1 on "
        "1-gpu-large, 1 on 2-gpu-large, 1 on 4-gpu-h100); a label starts at most 1 "
        "(github.label-max-jobs)",
        trigger=trigger,
        pr_number=41,
        head_sha=head,
    )
    assert not plan.should_run and plan.matrix == []
