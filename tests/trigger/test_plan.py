"""The pure plan core, fed GitHub's own webhook payloads (tests/fixtures/github/webhooks,
see SOURCES.md there), modified per case."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
from helpers import registry
from helpers.sharding import shard_count

from ci_budget.config import Config, parse_config
from ci_budget.models import Plan
from ci_budget.trigger.authz import Facts, Need
from ci_budget.trigger.decide import decide, split_list

HOOKS = Path(__file__).parents[1] / "fixtures" / "github" / "webhooks"
R = "test/registered/"
reg = partial(registry.reg, under=R)
HEAD = "0123456789abcdef0123456789abcdef01234567"


def payload(name: str) -> dict:
    return json.loads((HOOKS / f"{name}.payload.json").read_text())


REGS = [
    reg("a/test_a.py"),
    reg("a/test_b.py", runner="2-gpu-large"),
    reg("b/test_big1.py", stage="stage-c", runner="4-gpu-h100", est=2000),
    reg("b/test_big2.py", stage="stage-c", runner="4-gpu-h100", est=2000),
    reg("b/test_big3.py", stage="stage-c", runner="4-gpu-h100", est=2000),
    reg("b/test_night.py", stage="nightly", nightly=True),
    reg("b/test_off.py", stage="stage-c", runner="4-gpu-h100", disabled="broken"),
]


@dataclass
class Pull:
    """The fields of github.PullInfo the core reads."""

    number: int = 1
    state: str = "open"
    draft: bool = False
    head_sha: str = HEAD
    labels: list = field(default_factory=list)
    fork: bool = False
    head_pushed_at: str = "2019-05-15T15:20:20Z"  # a second before the comment


def comment(body="/rerun-test test_a.py", **changes) -> dict:
    data = payload("issue_comment.created.on-pull-request")
    data["comment"]["body"] = body
    for dotted, value in changes.items():
        node = data
        *path, last = dotted.split("__")
        for key in path:
            node = node[key]
        node[last] = value
    return data


def rerun(
    body="/rerun-test test_a.py", permission="write", pull=None, config=None, commits=(), **changes
):
    """Drive decide() the way the edge does, answering each Need; returns (plan, needs)."""
    facts, needs = Facts(), []
    data = comment(body, **changes)
    for _ in range(5):
        out = decide("issue_comment", data, facts, REGS, config or Config())
        if isinstance(out, Plan):
            return out, needs
        needs.append(out)
        if out.what == "refusals":  # none of ci-budget's earlier replies refused anyone
            assert out.number == data["issue"]["number"]
            facts.refused = set()
        elif out.what == "permission":
            assert out.login == data["comment"]["user"]["login"]
            facts.permission = permission
        elif out.what == "commits":
            facts.commits = list(commits)
        else:
            assert out.number == data["issue"]["number"]
            facts.pull = pull or Pull()
    raise AssertionError("decide() kept asking")


@pytest.mark.parametrize("permission", ["admin", "write", "maintain"])
def test_rerun_test_by_a_writer_runs_at_the_head_from_pulls_get(permission):
    plan, needs = rerun("/rerun-test test_a.py::TestA.test_x", permission)
    assert [n.what for n in needs] == ["refusals", "permission", "pull"]
    assert plan.should_run and plan.trigger == "rerun-test"
    assert plan.pr_number == 1 and plan.comment_id == 492700400
    assert plan.head_sha == HEAD  # from pulls/get; the comment payload carries no head SHA
    assert plan.reaction == "eyes"
    [row] = plan.matrix
    assert row.specs == [R + "a/test_a.py::TestA::test_x"]
    assert (row.runner_config, row.runs_on, row.partition) == (
        "1-gpu-large",
        ["self-hosted", "1-gpu-large"],
        "0/1",
    )
    assert plan.reply.startswith(f"@Codertocat rerunning at `{HEAD}` (#1)")
    assert "`1-gpu-large` (runs-on: self-hosted, 1-gpu-large)" in plan.reply


@pytest.mark.parametrize("permission", ["read", "triage", "none"])
def test_rerun_test_by_a_non_writer_is_refused_before_the_pr_is_read(permission):
    plan, needs = rerun(permission=permission)
    assert [n.what for n in needs] == ["refusals", "permission"]
    assert not plan.should_run and plan.matrix == [] and plan.head_sha is None
    assert plan.reaction == "confused"
    assert f"Codertocat has '{permission}' permission; runs need admin or write" in plan.reply
    # Remembered: later comments by the same person on this PR cost one API call, no answer.
    assert plan.reply.startswith(
        "<!-- ci-budget:refused-codertocat -->\n@Codertocat `/rerun-test` refused:"
    )


def test_author_association_owner_does_not_count():
    plan, _ = rerun(permission="read", comment__author_association="OWNER")
    assert not plan.should_run


def test_permission_lookup_failure_refuses():
    facts = Facts(permission_error="HTTP 502 from the collaborator endpoint", refused=set())
    plan = decide("issue_comment", comment(), facts, REGS, Config())
    assert not plan.should_run and plan.reaction == "confused"
    assert "could not check Codertocat's permission: HTTP 502" in plan.reason
    assert "<!--" not in plan.reply  # GitHub's failure, not the person's: not remembered


def test_allow_and_deny_users_widen_and_narrow():
    allow = parse_config({"github": {"allow-users": ["codertocat"]}}, "t")
    plan, needs = rerun(permission="read", config=allow)
    assert plan.should_run and [n.what for n in needs] == ["pull"]
    deny = parse_config({"github": {"deny-users": ["CODERTOCAT"]}}, "t")
    plan, needs = rerun(permission="admin", config=deny)
    assert not plan.should_run and [n.what for n in needs] == ["refusals"]
    assert "Codertocat is not allowed to trigger runs here" in plan.reply


@pytest.mark.parametrize(
    "changes",
    [
        {"sender__type": "Bot"},
        {"sender__login": "renovate[bot]"},
        {"comment__user__login": "github-actions[bot]"},
        {"comment__user__type": "Bot"},
    ],
)
def test_bots_never_trigger_and_get_no_reply(changes):
    plan, needs = rerun(**changes)
    assert needs == [] and not plan.should_run
    assert plan.reply is None and plan.reaction is None


def test_an_edited_comment_acts_and_its_editor_is_the_one_authorised():
    data = payload("issue_comment.edited")  # GitHub's example: sender and author Codertocat
    data["issue"]["pull_request"] = comment()["issue"]["pull_request"]
    data["comment"]["body"] = "/rerun-test test_a.py"
    data["sender"]["login"] = "maintainer"  # someone with write access edited it
    facts = Facts(refused=set())
    assert decide("issue_comment", data, facts, REGS, Config()) == Need(
        "permission", login="maintainer"
    )
    facts.permission, facts.pull = "write", Pull(head_pushed_at="2019-05-15T15:20:21Z")
    plan = decide("issue_comment", data, facts, REGS, Config())
    # Bound to the edit's time (updated_at 15:20:22), not the comment's creation (15:20:21).
    assert plan.should_run and plan.head_sha == HEAD and plan.reply.startswith("@maintainer ")
    created = dict(data, action="created", sender=data["comment"]["user"])
    assert not decide("issue_comment", created, facts, REGS, Config()).should_run
    facts.permission = "read"
    plan = decide("issue_comment", data, facts, REGS, Config())
    assert not plan.should_run and "maintainer has 'read' permission" in plan.reason
    assert payload("issue_comment.edited")["comment"]["updated_at"] == "2019-05-15T15:20:22Z"


def test_comment_on_a_plain_issue_is_silent():
    data = payload("issue_comment.created")  # GitHub's example: an issue, no pull_request key
    data["comment"]["body"] = "/rerun-test test_a.py"
    plan = decide("issue_comment", data, Facts(), REGS, Config())
    assert not plan.should_run and plan.reply is None and plan.reaction is None
    assert "is an issue, not a pull request" in plan.reason


def test_ordinary_comment_is_silent():
    plan, needs = rerun(body="You are totally right! /rerun-test test_a.py")
    assert needs == [] and plan.reply is None and "not a /rerun-test command" in plan.reason


def test_bad_specs_are_refused_without_reading_the_pr():
    plan, needs = rerun("/rerun-test ../x.py nope.py $(id)")
    assert [n.what for n in needs] == ["refusals", "permission"]
    assert not plan.should_run and plan.reaction == "confused"
    assert plan.reply.splitlines()[1:] == [
        "- `../x.py`: '..' is not allowed; name a file inside the test tree",
        "- `nope.py`: not a registered test file",
        "- `$(id)`: contains the shell metacharacter '$'",
    ]


def test_bad_specs_beside_a_good_one_are_listed_and_the_good_one_runs():
    plan, needs = rerun("/rerun-test test_a.py ../x.py $(id)")
    assert [n.what for n in needs] == ["refusals", "permission", "pull"]
    assert plan.should_run and [r.specs for r in plan.matrix] == [[R + "a/test_a.py"]]
    assert plan.reply.splitlines()[-2:] == [
        "- not run: `../x.py`: '..' is not allowed; name a file inside the test tree",
        "- not run: `$(id)`: contains the shell metacharacter '$'",
    ]


def test_two_specs_on_two_runner_configs_give_two_rows():
    plan, _ = rerun("/rerun-test a/test_a.py test_b.py::TestB")
    assert [(r.name, r.runner_config, r.specs) for r in plan.matrix] == [
        ("rerun-test 1-gpu-large", "1-gpu-large", [R + "a/test_a.py"]),
        ("rerun-test 2-gpu-large", "2-gpu-large", [R + "a/test_b.py::TestB"]),
    ]


def test_closed_pr_is_refused():
    plan, _ = rerun(pull=Pull(state="closed"))
    assert not plan.should_run and plan.reaction == "confused"
    assert plan.reason == "pull request #1 is closed"
    assert "pull request #&#8203;1 is closed" in plan.reply  # a reference only we may write


def test_pull_lookup_failure_refuses():
    facts = Facts(permission="admin", pull_error="HTTP 404")
    plan = decide("issue_comment", comment(), facts, REGS, Config())
    assert not plan.should_run and "could not read pull request #1: HTTP 404" in plan.reason


def test_fork_and_draft_prs_run_when_a_writer_asks():
    plan, _ = rerun(pull=Pull(fork=True, draft=True))
    assert plan.should_run and plan.head_sha == HEAD


def labeled(label="run-ci", action="labeled", labels=(), **pr):
    data = payload(f"pull_request.{action}")
    if "label" in data:
        data["label"]["name"] = label
    data["pull_request"]["labels"] = [{"name": n} for n in labels]
    data["pull_request"].update(pr)
    return data


def test_run_ci_label_runs_every_stage_sharded():
    data = labeled()
    plan = decide("pull_request", data, Facts(permission="admin"), REGS, Config())
    assert plan.should_run and plan.trigger == "run-ci"
    assert plan.head_sha == data["pull_request"]["head"]["sha"] and plan.pr_number == 2
    # stage-c: 6000 s against 0.75 x 60 min = 2700 s -> 3 shards; nightly and disabled left out
    assert [(r.name, r.suite, r.partition, r.runner_config) for r in plan.matrix] == [
        ("base-b-test-1-gpu-large", "base-b-test-1-gpu-large", "0/1", "1-gpu-large"),
        ("base-b-test-2-gpu-large", "base-b-test-2-gpu-large", "0/1", "2-gpu-large"),
        ("stage-c-test-4-gpu-h100 1/3", "stage-c-test-4-gpu-h100", "0/3", "4-gpu-h100"),
        ("stage-c-test-4-gpu-h100 2/3", "stage-c-test-4-gpu-h100", "1/3", "4-gpu-h100"),
        ("stage-c-test-4-gpu-h100 3/3", "stage-c-test-4-gpu-h100", "2/3", "4-gpu-h100"),
    ]
    assert plan.matrix[2].runs_on == ["self-hosted", "4-gpu-h100"]


def test_gating_label_limited_to_stages_and_stage_timeouts():
    config = parse_config(
        {"github": {"gating-labels": {"run-c": ["stage-c"]}}, "stage-timeouts": {"stage-c": 200}},
        "t",
    )
    plan = decide("pull_request", labeled("run-c"), Facts(permission="admin"), REGS, config)
    assert [r.partition for r in plan.matrix] == ["0/1"]
    assert plan.matrix[0].suite == "stage-c-test-4-gpu-h100"


def test_shard_count_is_capped_and_at_least_one():
    config = parse_config({"planner": {"max-shards": 2}}, "t")
    regs = [r for r in REGS if r.stage == "stage-c" and r.enabled]
    assert shard_count(regs, config) == 2
    assert shard_count(regs, Config()) == 3
    assert shard_count(regs[:1], Config()) == 1


def test_other_label_does_not_run():
    plan = decide("pull_request", labeled("bug"), Facts(permission="admin"), REGS, Config())
    assert not plan.should_run and plan.matrix == []
    assert plan.reason == "pull_request labeled 'bug': not a gating label"


@pytest.mark.parametrize("action", ["synchronize", "opened"])
def test_pr_update_runs_only_with_a_gating_label(action):
    plan = decide(
        "pull_request",
        labeled(action=action, labels=["bug"]),
        Facts(permission="admin"),
        REGS,
        Config(),
    )
    assert not plan.should_run and "carries no gating label (run-ci)" in plan.reason
    data = labeled(action=action, labels=["bug", "run-ci"])
    plan = decide("pull_request", data, Facts(permission="admin"), REGS, Config())
    assert plan.should_run and plan.trigger == "pull-request" and len(plan.matrix) == 5


def test_draft_pr_is_not_run_unless_configured():
    data = labeled(draft=True)
    plan = decide("pull_request", data, Facts(permission="admin"), REGS, Config())
    assert not plan.should_run and "#2 is a draft" in plan.reason
    config = parse_config({"github": {"run-drafts": True}}, "t")
    assert decide("pull_request", data, Facts(permission="admin"), REGS, config).should_run


def test_unlabeled_never_runs():
    plan = decide(
        "pull_request", labeled(action="unlabeled"), Facts(permission="admin"), REGS, Config()
    )
    assert not plan.should_run and "unlabeled: never triggers a run" in plan.reason


def test_workflow_dispatch_runs_inputs_at_github_sha():
    data = payload("workflow_dispatch")
    data["inputs"] = {"suites": "stage-c-test-4-gpu-h100", "specs": "test_a.py, test_b.py::B.t"}
    plan = decide("workflow_dispatch", data, Facts(sha="f" * 40), REGS, Config())
    assert plan.should_run and plan.trigger == "dispatch" and plan.head_sha == "f" * 40
    assert [(r.name, r.specs, r.suite) for r in plan.matrix] == [
        ("specs 1-gpu-large", [R + "a/test_a.py"], None),
        ("specs 2-gpu-large", [R + "a/test_b.py::B::t"], None),
        ("stage-c-test-4-gpu-h100 1/3", [], "stage-c-test-4-gpu-h100"),
        ("stage-c-test-4-gpu-h100 2/3", [], "stage-c-test-4-gpu-h100"),
        ("stage-c-test-4-gpu-h100 3/3", [], "stage-c-test-4-gpu-h100"),
    ]


def test_workflow_dispatch_refuses_unknown_suites_and_bad_specs():
    data = payload("workflow_dispatch")  # GitHub's example: inputs {"name": ...} only
    plan = decide("workflow_dispatch", data, Facts(), REGS, Config())
    assert not plan.should_run and plan.reason == "workflow_dispatch: no suites or specs given"
    data["inputs"] = {"suites": "nope-suite", "specs": "a;b"}
    plan = decide("workflow_dispatch", data, Facts(), REGS, Config())
    assert not plan.should_run
    assert "unknown suite `nope-suite` (known: `base-b-test-1-gpu-large`" in plan.reason
    assert "`a;b`: contains the shell metacharacter ';'" in plan.reason


def test_dispatch_can_run_a_nightly_suite_by_name():
    plan = decide("local", {}, Facts(suites=["nightly-test-1-gpu-large"]), REGS, Config())
    assert plan.should_run and [r.suite for r in plan.matrix] == ["nightly-test-1-gpu-large"]


def test_command_line_flags_override_the_event():
    facts = Facts(specs=["test_a.py"], permission=None)
    plan = decide("issue_comment", comment("/rerun-test test_b.py"), facts, REGS, Config())
    assert isinstance(plan, Plan) and plan.trigger == "dispatch"
    assert plan.matrix[0].specs == [R + "a/test_a.py"]


def test_split_list_takes_spaces_and_commas():
    assert split_list(" a,b  c,,d ") == ["a", "b", "c", "d"]


def test_unknown_event_and_missing_event_do_not_run():
    plan = decide("workflow_run", payload("workflow_run.completed"), Facts(), REGS, Config())
    assert not plan.should_run and plan.trigger == "none"
    assert plan.reason == "workflow_run: not an event ci-budget plans runs for"
    assert "GITHUB_EVENT_NAME is not set" in decide(None, {}, Facts(), REGS, Config()).reason


@pytest.mark.parametrize(
    "event, mutate, message",
    [
        ("issue_comment", lambda d: d["comment"].pop("body"), "payload has no comment.body"),
        ("issue_comment", lambda d: d["issue"].update(number="1"), "issue.number is str"),
        ("issue_comment", lambda d: d["comment"]["user"].pop("login"), "comment.user.login"),
        ("pull_request", lambda d: d.pop("pull_request"), "payload has no pull_request.number"),
        ("pull_request", lambda d: d["pull_request"].update(labels=None), "pull_request.labels"),
        ("workflow_dispatch", lambda d: d.update(inputs=[1]), "inputs is not an object"),
    ],
)
def test_malformed_payloads_name_the_event_and_the_key(event, mutate, message):
    data = {
        "issue_comment": comment(),
        "pull_request": labeled(),
        "workflow_dispatch": payload("workflow_dispatch"),
    }[event]
    data = copy.deepcopy(data)
    mutate(data)
    plan = decide(event, data, Facts(permission="admin", pull=Pull()), REGS, Config())
    assert isinstance(plan, Plan) and not plan.should_run
    assert plan.reason.startswith(f"{event}: malformed event: ")
    assert message in plan.reason


def test_payload_that_is_not_an_object():
    plan = decide("pull_request", [1, 2], Facts(permission="admin"), REGS, Config())
    assert plan.reason == "pull_request: malformed event: payload is not a JSON object"


def test_need_is_only_returned_for_rerun_test():
    out = decide("issue_comment", comment(), Facts(), REGS, Config())
    assert out == Need("refusals", number=1, page=1)  # the payload's issue has 0 comments
    out = decide("issue_comment", comment(issue__comments=201), Facts(), REGS, Config())
    assert out == Need("refusals", number=1, page=3)  # the page holding the newest
    out = decide("issue_comment", comment(), Facts(refused=set()), REGS, Config())
    assert out == Need("permission", login="Codertocat")


# --- the commit is bound to the comment (time of check = time of use) ------------------------

OLD = "aaaaaaa1111111111111111111111111111111111"[:40]


def test_plain_rerun_test_is_refused_when_the_branch_was_pushed_after_the_comment():
    # The author force-pushes between the comment (15:20:21) and plan reading the PR.
    pushed = Pull(head_pushed_at="2019-05-15T15:20:40Z")
    plan, needs = rerun("/rerun-test test_a.py", pull=pushed)
    assert [n.what for n in needs] == ["refusals", "permission", "pull"]
    assert not plan.should_run and plan.head_sha is None and plan.matrix == []
    # An allowed person: answered every time, never remembered as a refusal of them.
    assert plan.reaction == "confused" and plan.reply_once is None and "<!--" not in plan.reply
    assert f"`{HEAD}`, is not provably older than this comment" in plan.reply
    assert f"`/rerun-test@{HEAD} test_a.py`" in plan.reply  # the full-SHA form that runs it


def test_plain_rerun_test_pushed_in_the_same_second_is_not_provably_older():
    plan, _ = rerun(pull=Pull(head_pushed_at="2019-05-15T15:20:21Z"))
    assert not plan.should_run
    plan, _ = rerun(pull=Pull(head_pushed_at=None))
    assert not plan.should_run and "unknown" in plan.reason


def test_rerun_test_at_sha_runs_exactly_that_commit_of_the_pr():
    pushed = Pull(head_pushed_at="2019-05-15T15:30:00Z")  # the head moved on: does not matter
    plan, needs = rerun(f"/rerun-test@{OLD.upper()} test_a.py", pull=pushed,
                        commits=[OLD, HEAD])  # fmt: skip
    assert [n.what for n in needs] == ["refusals", "permission", "pull", "commits"]
    assert plan.should_run and plan.head_sha == OLD
    assert f"rerunning at `{OLD}`" in plan.reply


def test_rerun_test_at_sha_of_another_commit_is_refused():
    plan, _ = rerun(f"/rerun-test@{'b' * 40} test_a.py", commits=[OLD, HEAD])
    assert not plan.should_run and f"`{'b' * 40}` is not a commit of #" in plan.reply
    assert f"its head is `{HEAD}`" in plan.reply


@pytest.mark.parametrize("digits", [7, 12, 39])
def test_a_commit_given_by_a_prefix_is_refused_with_the_heads_full_sha(digits):
    # Two commits sharing a 12-hex prefix take seconds to find: the second, pushed after the
    # approval, would run under it. Only the full SHA binds; the PR's commits are never read.
    twin = OLD[:digits] + "2" * (40 - digits)
    plan, needs = rerun(f"/rerun-test@{OLD[:digits]} test_a.py", commits=[OLD, twin])
    assert not plan.should_run and "commits" not in [n.what for n in needs]
    assert plan.reason.startswith(f"`@{OLD[:digits]}` has {digits} hex digits: a command bound")
    assert f"comment `/rerun-test@{HEAD} test_a.py`" in plan.reply


@pytest.mark.parametrize(
    "word", ["/rerun-test@abc", "/rerun-test@xyz1234", "/rerun-test@" + "a" * 41]
)
def test_rerun_test_at_something_that_is_not_a_sha(word):
    plan, needs = rerun(f"{word} test_a.py")
    assert not plan.should_run and "is not a commit SHA (7 to 40 hex characters)" in plan.reply
    assert [n.what for n in needs] == ["refusals", "permission"]


def test_registry_is_read_at_the_pinned_commit_when_the_edge_can():
    # A file the PR adds exists only at the PR's commit: it resolves there, not in the checkout.
    facts = Facts(permission="write", pull=Pull(), read_commits=True)
    data = comment("/rerun-test new/test_new.py")
    assert decide("issue_comment", data, facts, REGS, Config()) == Need("registry", sha=HEAD)
    facts.registry, facts.registry_sha = [*REGS, reg("new/test_new.py")], HEAD
    plan = decide("issue_comment", data, facts, REGS, Config())
    assert plan.should_run and plan.matrix[0].specs == [R + "new/test_new.py"]
    facts.registry, facts.registry_error = None, "git fetch failed"
    plan = decide("issue_comment", data, facts, REGS, Config())
    assert not plan.should_run and "could not read the registrations" in plan.reason


# --- approval bound to a commit: labels and forks ----------------------------------------------


def forked(data: dict) -> dict:
    data["pull_request"]["head"]["repo"]["full_name"] = "mallory/Hello-World"
    return data


def test_fork_pr_on_pull_request_never_plans_a_gpu_run():
    # On `pull_request` the workflow and the action are the fork's own code.
    plan = decide("pull_request", forked(labeled()), Facts(permission="admin"), REGS, Config())
    assert not plan.should_run and plan.matrix == [] and "is from a fork" in plan.reason


def test_label_on_a_fork_approves_the_head_it_was_applied_on():
    data = forked(labeled())
    sha = data["pull_request"]["head"]["sha"]
    facts = Facts(read_commits=True)
    # Whoever applied it is checked first: nothing of the PR is read for a label that fails.
    assert decide("pull_request_target", data, facts, REGS, Config()) == Need(
        "permission", login=data["sender"]["login"]
    )
    facts.permission = "write"
    assert decide("pull_request_target", data, facts, REGS, Config()) == Need("registry", sha=sha)
    facts.registry, facts.registry_sha = REGS[:1], sha  # the registry at that commit, as data
    plan = decide("pull_request_target", data, facts, REGS, Config())
    assert plan.should_run and plan.head_sha == sha
    assert [r.suite for r in plan.matrix] == ["base-b-test-1-gpu-large"]


@pytest.mark.parametrize("action", ["synchronize", "reopened"])
def test_push_to_a_labelled_fork_pr_needs_a_new_approval(action):
    data = forked(labeled(action="synchronize", labels=["run-ci", "bug"]))
    data["action"] = action
    sha = data["pull_request"]["head"]["sha"]
    plan = decide("pull_request_target", data, Facts(read_commits=True), REGS, Config())
    assert not plan.should_run and plan.matrix == []
    assert plan.unlabel == ["run-ci"]  # applying it again is the new approval
    assert f"`{sha}` is new on this pull request from a fork" in plan.notice
    assert f"`/rerun-test@{sha} SPEC…`" in plan.notice


def test_push_to_a_labelled_same_repo_pr_keeps_running():
    data = labeled(action="synchronize", labels=["run-ci"])
    plan = decide("pull_request_target", data, Facts(permission="admin"), REGS, Config())
    assert plan.should_run and plan.head_sha == data["pull_request"]["head"]["sha"]
    assert plan.notice is None and plan.unlabel == []
