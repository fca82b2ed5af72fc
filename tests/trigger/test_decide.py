"""Which GitHub events start GPU runs, pinned by value: every pull-request action, every event
kind, every collaborator permission, and both sides of every `/rerun-test` limit, all through
`decide` with GitHub's own webhook payloads (tests/fixtures/github/webhooks)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from helpers import registry
from helpers.sharding import shard_count

from ci_budget.config import Config, ConfigError, parse_config
from ci_budget.models import Plan
from ci_budget.registry.specs import COMMAND, MAX_LINE_CHARS, MAX_SPEC_CHARS, USAGE
from ci_budget.render.escape import inline
from ci_budget.trigger.authz import Facts, Need, authorise, is_bot
from ci_budget.trigger.decide import PULL_ACTIONS, decide
from ci_budget.trigger.rows import suite_rows

HOOKS = Path(__file__).parents[1] / "fixtures" / "github" / "webhooks"
R = "test/registered/"
reg = partial(registry.reg, under=R)
HEAD = "0123456789abcdef0123456789abcdef01234567"
LONG = R + "d/" + "x" * (MAX_SPEC_CHARS - len(R) - len("d/") - 3) + ".py"  # exactly 200


def payload(name: str) -> dict:
    return json.loads((HOOKS / f"{name}.payload.json").read_text())


REGS = [
    reg("a/test_a.py"),
    reg("a/test_b.py", runner="2-gpu-large"),
    reg("c/test_c.py", stage="stage-c", runner="4-gpu-h100"),
    reg("n/test_night.py", stage="nightly", nightly=True),
    reg("o/test_off.py", stage="stage-c", runner="4-gpu-h100", disabled="broken"),
    reg("m/test_amd.py", stage="stage-c", runner="4-gpu-h100", backend="amd"),
    reg(LONG),
]


@dataclass
class Pull:
    """The fields of github.PullInfo the core reads."""

    number: int = 1
    state: str = "open"
    head_sha: str = HEAD
    head_pushed_at: str = "2019-05-15T15:20:20Z"  # a second before the comment


# --- pull requests ---------------------------------------------------------------------------

# Every `pull_request` activity type GitHub documents.
ALL_PULL_ACTIONS = [
    "assigned", "auto_merge_disabled", "auto_merge_enabled", "closed", "converted_to_draft",
    "demilestoned", "dequeued", "edited", "enqueued", "labeled", "locked", "milestoned",
    "opened", "ready_for_review", "reopened", "review_request_removed", "review_requested",
    "synchronize", "unassigned", "unlabeled", "unlocked",
]  # fmt: skip
RUNS = {"opened": "pull-request", "synchronize": "pull-request", "reopened": "pull-request"}


def pull_event(action="opened", labels=("run-ci",), label="run-ci", **pr):
    data = payload("pull_request.opened")
    data["action"] = action
    data["label"] = {"name": label}
    data["pull_request"]["labels"] = [{"name": n} for n in labels]
    data["pull_request"].update(pr)
    return data


def suites(plan):
    return [(r.suite, r.partition) for r in plan.matrix]


EVERY_SUITE = [
    ("base-b-test-1-gpu-large", "0/1"),
    ("base-b-test-2-gpu-large", "0/1"),
    ("stage-c-test-4-gpu-h100", "0/1"),
]


def test_pull_actions_that_run_are_exactly_opened_synchronize_reopened():
    assert PULL_ACTIONS == ("opened", "synchronize", "reopened")


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target"])
@pytest.mark.parametrize("action", ALL_PULL_ACTIONS)
def test_every_pull_request_action_with_the_label_on_the_pr(event, action):
    data = pull_event(action, label="unrelated")
    plan = decide(event, data, Facts(permission="admin"), REGS, Config())
    assert isinstance(plan, Plan)
    assert (plan.pr_number, plan.head_sha) == (2, data["pull_request"]["head"]["sha"])
    if action in RUNS:
        assert plan.should_run and plan.trigger == RUNS[action]
        assert suites(plan) == EVERY_SUITE
        assert plan.reason.startswith(f"pull_request {action}: label 'run-ci': 3 jobs: ")
    elif action == "labeled":
        assert not plan.should_run and plan.matrix == [] and plan.trigger == "none"
        assert plan.reason == "pull_request labeled 'unrelated': not a gating label"
    else:
        assert not plan.should_run and plan.matrix == [] and plan.trigger == "none"
        assert plan.reason == f"pull_request {action}: never triggers a run"


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target"])
def test_adding_the_gating_label_runs_whatever_labels_the_pr_had(event):
    plan = decide(
        event, pull_event("labeled", labels=()), Facts(permission="admin"), REGS, Config()
    )
    assert plan.should_run and plan.trigger == "run-ci" and suites(plan) == EVERY_SUITE


@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened"])
def test_updates_without_a_gating_label_do_not_run(action):
    plan = decide(
        "pull_request",
        pull_event(action, labels=("bug",)),
        Facts(permission="admin"),
        REGS,
        Config(),
    )
    assert not plan.should_run and plan.trigger == "none" and plan.matrix == []
    assert plan.reason == f"pull_request {action}: #2 carries no gating label (run-ci)"
    config = parse_config({"github": {"gating-labels": {}}}, "t")
    plan = decide("pull_request", pull_event(action), Facts(permission="admin"), REGS, config)
    assert not plan.should_run
    assert plan.reason == f"pull_request {action}: #2 carries no gating label (none configured)"


@pytest.mark.parametrize("action", ["opened", "labeled"])
def test_drafts_and_closed_prs_do_not_run(action):
    plan = decide(
        "pull_request", pull_event(action, draft=True), Facts(permission="admin"), REGS, Config()
    )
    assert not plan.should_run and plan.matrix == []
    assert plan.reason == f"pull_request {action}: #2 is a draft"
    drafts = parse_config({"github": {"run-drafts": True}}, "t")
    assert decide(
        "pull_request", pull_event(action, draft=True), Facts(permission="admin"), REGS, drafts
    ).should_run
    plan = decide(
        "pull_request", pull_event(action, draft=None), Facts(permission="admin"), REGS, Config()
    )
    assert plan.should_run  # GitHub sends null on some old payloads: not a draft
    plan = decide(
        "pull_request",
        pull_event(action, state="closed"),
        Facts(permission="admin"),
        REGS,
        Config(),
    )
    assert not plan.should_run and plan.reason == f"pull_request {action}: #2 is not open"


def test_stage_gating_labels_union_and_an_empty_list_means_every_stage():
    config = parse_config(
        {
            "github": {
                "gating-labels": {
                    "run-b": ["base-b"],
                    "run-c": ["stage-c", "base-b"],
                    "run-one": ["base-b-test-2-gpu-large"],
                    "run-all": [],
                    "run-none": ["no-such-stage"],
                }
            }
        },
        "t",
    )

    def labels(*names):
        data = pull_event("synchronize", labels=names)
        return decide("pull_request", data, Facts(permission="admin"), REGS, config)

    assert suites(labels("run-b")) == EVERY_SUITE[:2]
    assert suites(labels("run-one")) == EVERY_SUITE[1:2]  # a stage entry may name a suite
    assert suites(labels("run-c")) == EVERY_SUITE
    assert suites(labels("run-one", "run-c")) == EVERY_SUITE
    assert suites(labels("run-b", "run-all")) == EVERY_SUITE
    assert labels("run-b", "run-c").reason.startswith(
        "pull_request synchronize: label 'run-b', 'run-c': 3 jobs: 3 suites ("
    )
    plan = labels("run-none")
    assert not plan.should_run and plan.trigger == "pull-request"
    assert plan.reason == "pull_request synchronize: label 'run-none' gates no runnable suite"


def test_nightly_disabled_and_other_backend_files_never_run_on_a_label():
    plan = decide("pull_request", pull_event("labeled"), Facts(permission="admin"), REGS, Config())
    assert "nightly-test-1-gpu-large" not in {r.suite for r in plan.matrix}
    amd = parse_config({"github": {"backends": ["amd"]}}, "t")
    plan = decide("pull_request", pull_event("labeled"), Facts(permission="admin"), REGS, amd)
    assert suites(plan) == [("stage-c-test-4-gpu-h100", "0/1")]
    only_off = [r for r in REGS if r.disabled or r.nightly]
    plan = decide(
        "pull_request", pull_event("labeled"), Facts(permission="admin"), only_off, Config()
    )
    assert not plan.should_run and "gates no runnable suite" in plan.reason


def test_suites_without_a_known_runner_are_noted_and_skipped():
    regs = [
        reg("a/test_a.py"),
        reg("l/test_l.py", 10, "per-commit", stage="per-commit"),
        reg("x/test_x.py", runner="9-gpu-x"),
    ]  # fmt: skip
    rows, notes = suite_rows(regs, Config())
    assert [r.suite for r in rows] == ["base-b-test-1-gpu-large"]
    assert notes == [
        "suite 'base-b-test-9-gpu-x': runner config '9-gpu-x' is not configured; skipped",
        "suite 'per-commit' has no runner_config; skipped",
    ]
    plan = decide("pull_request", pull_event("labeled"), Facts(permission="admin"), regs, Config())
    assert plan.should_run and plan.reason.endswith(
        "is not configured; skipped; suite 'per-commit' has no runner_config; skipped)"
    )


def test_shards_follow_measured_weights_when_given():
    regs = [reg(f"c/t{i}.py", stage="stage-c", est=100) for i in range(3)]
    assert shard_count(regs, Config()) == 1
    heavy = {(r.file, r.suite): 2000.0 for r in regs}
    assert shard_count(regs, Config(), heavy) == 3
    plan = decide(
        "pull_request", pull_event(), Facts(permission="admin", weights=heavy), regs, Config()
    )
    assert [(r.name, r.partition) for r in plan.matrix] == [
        ("stage-c-test-1-gpu-large 1/3", "0/3"),
        ("stage-c-test-1-gpu-large 2/3", "1/3"),
        ("stage-c-test-1-gpu-large 3/3", "2/3"),
    ]
    assert plan.reason == (
        "pull_request opened: label 'run-ci': 3 jobs: 1 suite (stage-c-test-1-gpu-large)"
    )


# --- events that are not pull requests ------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    ["push", "schedule", "workflow_run", "issues", "pull_request_review", "merge_group",
     "pull_request_review_comment", "discussion_comment", "release", "PULL_REQUEST"],
)  # fmt: skip
def test_other_events_never_run(event):
    data = pull_event() | {"comment": {"body": "/rerun-test test_a.py"}}
    plan = decide(event, data, Facts(permission="admin", pull=Pull()), REGS, Config())
    assert not plan.should_run and plan.matrix == [] and plan.trigger == "none"
    assert plan.reason == f"{event}: not an event ci-budget plans runs for"


@pytest.mark.parametrize("event", [None, ""])
def test_no_event_never_runs(event):
    plan = decide(event, pull_event(), Facts(permission="admin"), REGS, Config())
    assert not plan.should_run
    assert plan.reason == "no event: GITHUB_EVENT_NAME is not set (give --suite or --specs)"


def test_workflow_dispatch_with_nothing_or_bad_inputs():
    data = payload("workflow_dispatch")
    for inputs in (None, {}, {"suites": "", "specs": " "}):
        data["inputs"] = inputs
        plan = decide("workflow_dispatch", data, Facts(sha=HEAD), REGS, Config())
        assert not plan.should_run and plan.trigger == "dispatch" and plan.head_sha == HEAD
        assert plan.reason == "workflow_dispatch: no suites or specs given"
    for inputs in ({"suites": 1}, {"specs": ["a"]}):
        data["inputs"] = inputs
        plan = decide("workflow_dispatch", data, Facts(), REGS, Config())
        assert not plan.should_run and plan.trigger == "none"
        assert plan.reason == (
            "workflow_dispatch: malformed event: inputs.suites and inputs.specs must be strings"
        )


def test_workflow_dispatch_spec_count_limit_both_sides():
    config = parse_config({"github": {"max-specs": 2}}, "t")
    data = payload("workflow_dispatch")
    data["inputs"] = {"specs": "test_a.py test_b.py"}
    plan = decide("workflow_dispatch", data, Facts(sha=HEAD), REGS, config)
    assert plan.should_run and [r.name for r in plan.matrix] == [
        "specs 1-gpu-large",
        "specs 2-gpu-large",
    ]
    assert plan.reason == "workflow_dispatch: 2 jobs: 1 spec on 1-gpu-large; 1 spec on 2-gpu-large"
    data["inputs"] = {"specs": "test_a.py test_b.py test_c.py"}
    plan = decide("workflow_dispatch", data, Facts(sha=HEAD), REGS, config)
    assert not plan.should_run and plan.matrix == []
    assert plan.reason == "workflow_dispatch refused: 3 specs given; at most 2"


def test_workflow_dispatch_suite_runs_nightly_but_not_disabled_or_other_backends():
    data = payload("workflow_dispatch")
    data["inputs"] = {"suites": "nightly-test-1-gpu-large"}
    plan = decide("workflow_dispatch", data, Facts(sha=HEAD), REGS, Config())
    assert plan.should_run and suites(plan) == [("nightly-test-1-gpu-large", "0/1")]
    regs = [r for r in REGS if r.suite == "stage-c-test-4-gpu-h100" and r.backend != "cuda"]
    regs += [r for r in REGS if r.disabled]
    plan = decide("local", {}, Facts(suites=["stage-c-test-4-gpu-h100"]), regs, Config())
    assert not plan.should_run and plan.matrix == []
    assert plan.reason == "workflow_dispatch: nothing runnable in the given suites"


# --- /rerun-test -------------------------------------------------------------------------------


def comment(body, **user):
    data = payload("issue_comment.created.on-pull-request")
    data["comment"]["body"] = body
    data["comment"]["user"].update(user)
    return data


def rerun(body, permission="write", config=None, pull=None):
    """Drive decide() the way the edge does; returns (plan, the Needs asked)."""
    facts, needs = Facts(), []
    data = comment(body)
    for _ in range(4):
        out = decide("issue_comment", data, facts, REGS, config or Config())
        if isinstance(out, Plan):
            return out, [n.what for n in needs]
        needs.append(out)
        if out.what == "refusals":
            assert out == Need("refusals", number=1, page=1)
            facts.refused = set()
        elif out.what == "permission":
            assert out == Need("permission", login="Codertocat")
            facts.permission = permission
        else:
            assert out == Need("pull", number=1)
            facts.pull = pull or Pull()
    raise AssertionError("decide() kept asking")


PERMISSIONS = [
    ("admin", True),
    ("maintain", True),  # counts as write
    ("write", True),
    ("triage", False),  # counts as read
    ("read", False),
    ("none", False),
    ("", False),
    ("owner", False),  # not a GitHub permission: never widened
]


@pytest.mark.parametrize("permission, runs", PERMISSIONS)
def test_permission_mapping_for_every_role(permission, runs):
    plan, needs = rerun("/rerun-test test_a.py", permission)
    assert plan.should_run is runs
    if runs:
        assert needs == ["refusals", "permission", "pull"] and plan.reaction == "eyes"
        assert plan.head_sha == HEAD and [r.specs for r in plan.matrix] == [[R + "a/test_a.py"]]
    else:
        assert needs == ["refusals", "permission"] and plan.reaction == "confused"
        assert plan.matrix == [] and plan.head_sha is None
        assert plan.reason == (
            f"Codertocat has '{permission}' permission; runs need admin or write"
        )


@pytest.mark.parametrize(
    "allowed, permission, runs",
    [
        (["read"], "triage", True),  # triage maps to read
        (["read"], "read", True),
        (["read"], "maintain", False),  # maintain maps to write, not read
        (["read"], "write", False),
        (["maintain"], "maintain", True),
        (["maintain"], "write", False),
        (["triage"], "triage", True),
        (["triage"], "read", False),
        (["write"], "maintain", True),
        (["write"], "admin", False),
        (["admin"], "write", False),
        (["admin"], "admin", True),
    ],
)
def test_permission_mapping_against_configured_permissions(allowed, permission, runs):
    config = parse_config({"github": {"allowed-permissions": allowed}}, "t")
    assert (authorise("someone", Facts(permission=permission), config) is None) is runs
    plan, _ = rerun("/rerun-test test_a.py", permission, config)
    assert plan.should_run is runs


def test_authorise_answers():
    config = parse_config({"github": {"allow-users": ["Alice"], "deny-users": ["Mallory"]}}, "t")
    assert authorise("alice", Facts(), config) is None  # allowed without asking
    assert authorise("ALICE", Facts(permission_error="x"), config) is None
    assert authorise("mallory", Facts(permission="admin"), config) == (
        "mallory is not allowed to trigger runs here"
    )
    assert authorise("bob", Facts(), config) == "ask"
    assert authorise("bob", Facts(permission_error="HTTP 502"), config) == (
        "could not check bob's permission: HTTP 502"
    )
    both = parse_config({"github": {"allow-users": ["eve"], "deny-users": ["eve"]}}, "t")
    assert authorise("eve", Facts(permission="admin"), both) == (
        "eve is not allowed to trigger runs here"
    )


def test_rerun_test_without_a_spec_is_refused_with_the_usage():
    for body in ("/rerun-test", "/rerun-test   ", "/rerun-test\t\r\nsecond line"):
        plan, needs = rerun(body, "admin")
        assert needs == ["refusals", "permission"] and not plan.should_run and plan.matrix == []
        assert plan.reaction == "confused" and plan.trigger == "rerun-test"
        assert plan.reason == f"no spec given; usage: {USAGE}"
        usage = inline(f"no spec given; usage: {USAGE}")  # `[` of the usage: text, not a link
        assert plan.reply == f"@Codertocat `{COMMAND}` refused:\n- {usage}\n"


def test_rerun_test_spec_count_limit_both_sides():
    config = parse_config({"github": {"max-specs": 3}}, "t")
    plan, needs = rerun("/rerun-test test_a.py test_b.py test_c.py", "write", config)
    assert plan.should_run and needs == ["refusals", "permission", "pull"]
    assert [r.runner_config for r in plan.matrix] == ["1-gpu-large", "2-gpu-large", "4-gpu-h100"]
    plan, needs = rerun("/rerun-test test_a.py test_b.py test_c.py test_a.py", "write", config)
    assert not plan.should_run and needs == ["refusals", "permission"] and plan.matrix == []
    assert plan.reason == "4 specs given; at most 3"
    default = "/rerun-test " + " ".join(["test_a.py"] * 20)
    assert rerun(default)[0].should_run
    plan, _ = rerun(default + " test_a.py")
    assert not plan.should_run and plan.reason == "21 specs given; at most 20"


def test_rerun_test_spec_length_limit_both_sides():
    assert len(LONG) == MAX_SPEC_CHARS == 200
    plan, _ = rerun(f"/rerun-test {LONG}")
    assert plan.should_run and plan.matrix[0].specs == [LONG]
    longer = LONG[:-3] + "x.py"
    plan, needs = rerun(f"/rerun-test {longer}")
    assert not plan.should_run and needs == ["refusals", "permission"] and plan.matrix == []
    assert plan.reason == f"`{longer[:60]}...`: 201 characters; at most 200"


def test_rerun_test_command_line_length_limit_both_sides():
    assert MAX_LINE_CHARS == 2000
    head = "/rerun-test"
    line = head + " " * (MAX_LINE_CHARS - len(head) - len("test_a.py")) + "test_a.py"
    assert len(line) == 2000
    plan, _ = rerun(line + "\nmore text on the next line does not count" * 60)
    assert plan.should_run
    plan, needs = rerun(line.replace(" ", "  ", 1))
    assert not plan.should_run and needs == ["refusals", "permission"]
    assert plan.reason == "the command line is 2001 characters; at most 2000"


def test_command_spelling_is_exact():
    for body in ("/Rerun-test test_a.py", "rerun-test test_a.py", "please /rerun-test test_a.py"):
        plan, needs = rerun(body)
        assert needs == [] and not plan.should_run and plan.reply is None
        assert plan.reason == "issue_comment: not a /rerun-test command"
    # sglang's handler runs `/rerun-tests ...` as `/rerun-test ...`: ci-budget answers why not.
    plan, needs = rerun("/rerun-tests test_a.py")
    assert needs == ["refusals", "permission"] and not plan.should_run
    assert plan.reason == "`/rerun-tests` is not a command; write `/rerun-test SPEC...`"
    for body in (
        "  /rerun-test\ttest_a.py  ",
        "/rerun-test\u00a0test_a.py",
        "\n\n/rerun-test test_a.py",
    ):
        plan, _ = rerun(body)
        assert plan.should_run and plan.matrix[0].specs == [R + "a/test_a.py"]


def test_refused_specs_and_closed_or_headless_prs_never_run():
    plan, _ = rerun("/rerun-test nope.py test_amd.py")
    assert not plan.should_run and plan.matrix == []
    assert plan.reply.splitlines()[1:] == [
        "- `nope.py`: not a registered test file",
        "- `test_amd.py`: registered for amd, not for cuda (the backends this repository runs here)",
    ]
    for pull, why in [
        (Pull(state="closed"), "pull request #1 is closed"),
        (Pull(state="merged"), "pull request #1 is merged"),
        (Pull(head_sha=""), "pull request #1 has no head commit"),
        (Pull(head_sha=None), "pull request #1 has no head commit"),
        (object(), "pull request #1 is unknown"),
    ]:
        plan, needs = rerun("/rerun-test test_a.py", pull=pull)
        assert (
            needs == ["refusals", "permission", "pull"]
            and not plan.should_run
            and plan.matrix == []
        )
        assert plan.reason == why and plan.reaction == "confused"


def test_refused_specs_do_not_stop_the_others_and_the_reply_lists_them():
    plan, _ = rerun("/rerun-test test_off.py test_amd.py")
    assert plan.should_run and [r.specs for r in plan.matrix] == [[R + "o/test_off.py"]]
    assert plan.reason.endswith("; 1 not run")
    assert plan.reply.splitlines()[1:] == [
        f"- `4-gpu-h100` (runs-on: self-hosted, 4-gpu-h100): `{R}o/test_off.py`",
        f"- note: `{R}o/test_off.py` is disabled (broken); it runs because it was asked for",
        "- not run: `test_amd.py`: registered for amd, not for cuda (the backends this "
        "repository runs here)",
    ]


def test_rerun_test_reply_and_reason_name_the_specs_and_runners():
    plan, _ = rerun("/rerun-test test_a.py test_c.py::TestC.test_x")
    assert plan.reason == (
        f"/rerun-test by Codertocat: 2 specs on 1-gpu-large, 4-gpu-h100 at {HEAD[:10]}"
    )
    assert plan.reply.startswith("@Codertocat rerunning at ")
    assert plan.reply.splitlines()[1:] == [
        f"- `1-gpu-large` (runs-on: self-hosted, 1-gpu-large): `{R}a/test_a.py`",
        f"- `4-gpu-h100` (runs-on: self-hosted, 4-gpu-h100): `{R}c/test_c.py::TestC::test_x`",
    ]
    assert [(r.name, r.partition, r.suite) for r in plan.matrix] == [
        ("rerun-test 1-gpu-large", "0/1", None),
        ("rerun-test 4-gpu-h100", "0/1", None),
    ]
    plan, _ = rerun("/rerun-test test_a.py")
    assert plan.reason == f"/rerun-test by Codertocat: 1 spec on 1-gpu-large at {HEAD[:10]}"


@pytest.mark.parametrize(
    "user, bot",
    [
        ({"login": "renovate[bot]", "type": "User"}, True),
        ({"login": "app", "type": "Bot"}, True),
        ({"login": "robot", "type": "User"}, False),
        ({"login": "bot]", "type": "User"}, False),
        ({"type": "User"}, False),
        ("renovate[bot]", False),
        (None, False),
    ],
)
def test_is_bot(user, bot):
    assert is_bot(user) is bot


def test_comment_actions_other_than_created_and_edited_are_silent():
    for action in ("deleted", "pinned"):
        data = comment("/rerun-test test_a.py")
        data["action"] = action
        plan = decide("issue_comment", data, Facts(permission="admin", pull=Pull()), REGS,
                      Config())  # fmt: skip
        assert not plan.should_run and plan.reply is None and plan.reaction is None
        assert plan.reason == f"issue_comment: action '{action}' never triggers a run"


def test_rerun_test_reply_lists_several_specs_on_one_runner():
    plan, _ = rerun("/rerun-test test_a.py::A test_a.py::B")
    assert plan.reply.splitlines()[1] == (
        f"- `1-gpu-large` (runs-on: self-hosted, 1-gpu-large): "
        f"`{R}a/test_a.py::A`, `{R}a/test_a.py::B`"
    )


def test_workflow_dispatch_takes_absolute_specs_inside_the_checkout():
    root = "/home/runner/work/repo/repo"
    data = payload("workflow_dispatch")
    data["inputs"] = {"specs": f"{root}/{R}a/test_a.py"}
    plan = decide("workflow_dispatch", data, Facts(sha=HEAD, root=root), REGS, Config())
    assert plan.should_run and plan.matrix[0].specs == [R + "a/test_a.py"]


def test_workflow_dispatch_shards_on_measured_weights():
    heavy = {(R + "c/test_c.py", "stage-c-test-4-gpu-h100"): 5000.0}
    regs = REGS + [reg("c/test_c2.py", stage="stage-c", runner="4-gpu-h100", est=10)]
    facts = Facts(sha=HEAD, suites=["stage-c-test-4-gpu-h100"], weights=heavy)
    plan = decide(None, None, facts, regs, Config())
    assert [r.partition for r in plan.matrix] == ["0/2", "1/2"]
    plan = decide(None, None, Facts(sha=HEAD, suites=["stage-c-test-4-gpu-h100"]), regs, Config())
    assert [r.partition for r in plan.matrix] == ["0/1"]


def test_workflow_dispatch_refusals_keep_the_trigger_and_commit():
    data = payload("workflow_dispatch")
    data["inputs"] = {"suites": "nope-a nope-b"}
    plan = decide("workflow_dispatch", data, Facts(sha=HEAD), REGS, Config())
    assert (plan.should_run, plan.trigger, plan.head_sha) == (False, "dispatch", HEAD)
    known = (
        "(known: `base-b-test-1-gpu-large`, `base-b-test-2-gpu-large`, "
        "`nightly-test-1-gpu-large`, `stage-c-test-4-gpu-h100`)"
    )
    assert plan.reason == (
        f"workflow_dispatch refused: unknown suite `nope-a` {known}; unknown suite `nope-b` {known}"
    )
    regs = [r for r in REGS if r.disabled]
    plan = decide(None, None, Facts(sha=HEAD, suites=[regs[0].suite]), regs, Config())
    assert (plan.should_run, plan.trigger, plan.head_sha) == (False, "dispatch", HEAD)
    assert plan.reason == "workflow_dispatch: nothing runnable in the given suites"


def test_shard_count_follows_the_configured_safety():
    # 360 + 360 + 240 + 240 + 240 s against a 13 min (780 s) stage. At safety 1.0 LPT does not
    # fit 2 shards (840 | 600), so it takes 3; at the default 0.75 (585 s) neither does 2.
    weights = [360, 360, 240, 240, 240]
    regs = [reg(f"c/t{i}.py", stage="stage-c", est=w) for i, w in enumerate(weights)]
    timeouts = {"stage-timeouts": {"stage-c": 13}}
    assert shard_count(regs, parse_config({**timeouts, "planner": {"safety": 1.0}}, "t")) == 3
    assert shard_count(regs, parse_config(timeouts, "t")) == 3
    with pytest.raises(ConfigError, match="algorithm"):
        parse_config({**timeouts, "planner": {"algorithm": "best"}}, "t")


def test_a_suite_without_a_runner_does_not_stop_the_suites_after_it():
    regs = [
        reg("l/test_l.py", 10, "a-legacy", stage="a-legacy"),
        reg("x/test_x.py", runner="9-gpu-x", stage="a-odd"),
        reg("a/test_a.py"),
    ]  # fmt: skip
    rows, notes = suite_rows(regs, Config())
    assert [r.suite for r in rows] == ["base-b-test-1-gpu-large"]
    assert len(notes) == 2
