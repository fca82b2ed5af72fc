"""Who may trigger what, end to end through `plan` against the GitHub stand-in: sglang's
`.github/CI_PERMISSIONS.json` users of each kind, the label's sender, the commands sglang's handler
knows (`/tag-run-ci-label [extra]`, `/tag-and-rerun-ci`, `/rerun-group`, `/rerun-failed-ci`),
edited comments, and what one label may start. Payloads are GitHub's examples
(tests/fixtures/github/webhooks); `plan` runs in this process, its requests over real HTTP."""

from __future__ import annotations

import io
import json

import pytest
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN
from ghstandin.state import WorkflowRun

from ci_budget.app.plan import PlanOptions, plan
from ci_budget.app.settings import Settings
from ci_budget.app.sink import Sink
from tests.render.test_untrusted import LIVE, tokens
from tests.trigger.test_plan_cli import (
    HOOKS,
    LIST,
    MAIN,
    PERMISSION,
    PULL,
    REACT,
    REPLY,
    R,
    _pr_event,
    comment_event,
    read_outputs,
)

HEAD = "feedfacefeedfacefeedfacefeedfacefeedface"
ADD = "issues/add-labels"
REMOVE = "issues/remove-label"
RUNS = "actions/list-workflow-runs-for-repo"
WORKFLOW = ".github/workflows/gpu.yml"
# Users of each kind in sglang's file (its real entries have these three shapes).
GRANTS = {
    "fast": {"can_tag_run_ci_label": True, "can_rerun_failed_ci": True,
             "cooldown_interval_minutes": 0, "reason": "custom override"},
    "slow": {"can_tag_run_ci_label": True, "can_rerun_failed_ci": True,
             "cooldown_interval_minutes": 60, "reason": "custom override"},
    "limited": {"can_tag_run_ci_label": False, "can_rerun_failed_ci": False,
                "cooldown_interval_minutes": 60, "reason": "custom override"},
}  # fmt: skip


@pytest.fixture
def repo(tmp_path):
    """test_plan_cli's repository: models/test_a.py, models/test_b.py, ops/test_a.py."""
    root = tmp_path / "repo"
    for rel, stage, runner in [
        ("models/test_a.py", "base-b", "1-gpu-large"),
        ("models/test_b.py", "base-c", "2-gpu-large"),
        ("ops/test_a.py", "base-b", "1-gpu-large"),
    ]:
        path = root / R / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        line = f'register_cuda_ci(est_time=60, stage="{stage}", runner_config="{runner}")'
        path.write_text(line + "\n" + MAIN)
    (root / ".git").mkdir()
    return root


@pytest.fixture
def gh(github_standin, repo):
    (repo / ".github").mkdir()
    (repo / ".github" / "CI_PERMISSIONS.json").write_text(json.dumps(GRANTS, indent=4))
    github_standin.add_pull(7, head_sha=HEAD, user="author")
    roles = {"slow": "read", "limited": "read", "tri": "triage", "writer": "write"}
    github_standin.state.roles.update(roles)
    github_standin.state.users.update({"fast", "author"})
    return github_standin


def run(repo, gh, event, payload, config=None):
    """`plan` as the action runs it, in this process; (outputs, stdout+stderr, step summary)."""
    work = repo.parent
    (work / "event.json").write_text(json.dumps(payload))
    output, summary = work / "output.txt", work / "summary.md"
    output.unlink(missing_ok=True)
    summary.unlink(missing_ok=True)
    env = {
        "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(work / "event.json"),
        "GITHUB_REPOSITORY": gh.state.repo, "GITHUB_API_URL": gh.url,
        "GITHUB_TOKEN": INSTALLATION_TOKEN, "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_RUN_ID": "77", "GITHUB_ACTIONS": "true",
        "GITHUB_WORKFLOW_REF": f"{gh.state.repo}/{WORKFLOW}@refs/heads/main",
        "CI_BUDGET_COMMENT_LOGIN": BOT_LOGIN,
    }  # fmt: skip
    if config:
        (repo / "ci-budget.toml").write_text(config)
    settings = Settings(root=repo, environ=env)
    out, err = io.StringIO(), io.StringIO()
    assert plan(settings, PlanOptions(), Sink(settings, stdout=out, stderr=err)) == 0
    return read_outputs(output), out.getvalue() + err.getvalue(), summary.read_text()


def say(repo, gh, login, body, **kw):
    before = len(gh.calls())
    event = comment_event(gh, login, body)
    event["issue"]["user"]["login"] = gh.state.issues[7].user  # the PR's author
    outputs, log, summary = run(repo, gh, "issue_comment", event, **kw)
    return outputs, [c["op"] for c in gh.calls()[before:]], log, summary


def bot_replies(gh, number=7):
    return [c.body for c in gh.comments(number) if c.login == BOT_LOGIN]


def labels(gh, number=7):
    return list(gh.state.issues[number].labels)


# --- /rerun-test: cooldown 0 in the file, or write access -------------------------------------


def test_cooldown_zero_in_the_file_runs_without_asking_github_who_it_is(repo, gh):
    out, ops, _, _ = say(repo, gh, "fast", "/rerun-test models/test_a.py")
    assert out["should-run"] == "true" and out["head-sha"] == HEAD
    assert ops == [PULL, REACT, REPLY]  # no refusal look-up, no permission call


def test_a_cooldown_above_zero_without_write_access_is_refused_naming_both_ways(repo, gh):
    out, ops, _, _ = say(repo, gh, "slow", "/rerun-test models/test_a.py")
    assert out["should-run"] == "false" and ops == [LIST, PERMISSION, REACT, REPLY]
    assert "slow has 'read' permission; runs need admin or write, or cooldown_interval_minutes 0 " \
        "in .github/CI_PERMISSIONS.json" in out["reason"]  # fmt: skip


def test_write_access_runs_without_an_entry_in_the_file(repo, gh):
    out, ops, _, _ = say(repo, gh, "writer", "/rerun-test models/test_a.py")
    assert out["should-run"] == "true" and ops == [LIST, PERMISSION, PULL, REACT, REPLY]


def test_the_file_is_read_from_the_checkout_and_a_bad_entry_grants_nothing(repo, gh):
    grants = dict(GRANTS, fast={"cooldown_interval_minutes": "0"})
    (repo / ".github" / "CI_PERMISSIONS.json").write_text(json.dumps(grants))
    out, ops, log, _ = say(repo, gh, "fast", "/rerun-test models/test_a.py")
    assert out["should-run"] == "false" and PERMISSION in ops
    assert "warning: .github/CI_PERMISSIONS.json: 'fast': cooldown_interval_minutes is str" in log


# --- /rerun-group -------------------------------------------------------------------------------


def test_rerun_group_runs_every_registered_file_under_the_directory(repo, gh):
    out, _, _, _ = say(repo, gh, "fast", "/rerun-group models")
    assert out["should-run"] == "true" and out["trigger"] == "rerun-group"
    rows = json.loads(out["matrix"])["include"]
    assert [(r["runner_config"], r["specs"]) for r in rows] == [
        ("1-gpu-large", [R + "models/test_a.py"]),
        ("2-gpu-large", [R + "models/test_b.py"]),
    ]
    out, _, _, _ = say(repo, gh, "fast", "/rerun-group nope")
    assert out["should-run"] == "false" and "groups: `models`, `ops`" in bot_replies(gh)[-1]
    out, ops, _, _ = say(repo, gh, "slow", "/rerun-group models")  # the /rerun-test rule
    assert out["should-run"] == "false" and PERMISSION in ops


# --- labels: /tag-run-ci-label and a label applied by hand --------------------------------------


def test_tag_run_ci_label_labels_and_plans_the_label_run_at_the_bound_head(repo, gh):
    out, ops, _, _ = say(repo, gh, "slow", "/tag-run-ci-label")  # can_tag, no write access
    assert out["should-run"] == "true" and out["trigger"] == "run-ci" and out["head-sha"] == HEAD
    # No write access, cooldown 60: its permission and its last labelled run are looked up.
    assert ops == [PULL, PERMISSION, "actions/list-workflow-runs", REACT, REPLY, ADD]
    assert labels(gh) == ["run-ci"]
    assert [r["suite"] for r in json.loads(out["matrix"])["include"]] == [
        "base-b-test-1-gpu-large", "base-c-test-2-gpu-large",
    ]  # fmt: skip
    [reaction] = [r for c in gh.comments(7) for r in c.reactions]
    assert reaction == [BOT_LOGIN, "+1"]  # as sglang's handler answers


def test_tag_run_ci_label_extra_adds_both_labels_and_needs_the_grant(repo, gh):
    out, _, _, _ = say(repo, gh, "fast", "/tag-run-ci-label extra")
    assert labels(gh) == ["run-ci", "run-ci-extra"] and out["should-run"] == "true"
    out, ops, _, _ = say(repo, gh, "limited", "/tag-run-ci-label")
    assert out["should-run"] == "false" and ADD not in ops
    assert "a gating label counts from admin or write, or can_tag_run_ci_label" in out["reason"]


def test_a_label_applied_by_hand_counts_only_from_an_authorised_sender(repo, gh):
    gh.state.issues[7].labels = ["run-ci"]
    refused = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    refused["sender"]["login"] = "tri"  # triage may label, not run
    out, _, _ = run(repo, gh, "pull_request_target", refused)
    assert out["should-run"] == "false" and out["matrix"] == '{"include":[]}'
    # GitHub's `permission` folds triage into read.
    assert "tri has 'read' permission; a gating label counts from admin or write" in out["reason"]
    assert labels(gh) == [] and [c["op"] for c in gh.calls()][:2] == [PERMISSION, REMOVE]
    [notice] = bot_replies(gh)
    assert "removed `run-ci`: tri has" in notice and notice.count("\n") == 1  # marker + a line
    # From the file's can_tag_run_ci_label with cooldown 0: no API call at all.
    before = len(gh.calls())
    granted = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    granted["sender"]["login"] = "fast"
    out, _, _ = run(repo, gh, "pull_request_target", granted)
    assert out["should-run"] == "true" and gh.calls()[before:] == []


@pytest.mark.parametrize("who", ["renovate[bot]", "denied"])
def test_a_label_from_a_bot_or_a_denied_user_is_removed_without_a_permission_call(repo, gh, who):
    gh.state.issues[7].labels = ["run-ci"]
    event = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    event["sender"].update(login=who, type="Bot" if who.endswith("[bot]") else "User")
    out, _, _ = run(repo, gh, "pull_request_target", event,
                    config='[github]\ndeny-users = ["denied"]\n')  # fmt: skip
    assert out["should-run"] == "false" and labels(gh) == []
    assert PERMISSION not in [c["op"] for c in gh.calls()]


# --- /rerun-failed-ci and /tag-and-rerun-ci ----------------------------------------------------


def _runs(gh):
    for i, (workflow, conclusion) in enumerate(
        [
            ("pr-test.yml", "failure"),
            ("lint.yml", "skipped"),
            ("docs.yml", "success"),
            ("gpu.yml", "failure"),
        ]  # fmt: skip
    ):
        gh.state.runs[100 + i] = WorkflowRun(
            100 + i, workflow, f"2026-08-0{i + 1}T10:00:00Z", head_sha=HEAD,
            conclusion=conclusion, event="pull_request_target",
        )  # fmt: skip


def test_the_prs_author_may_rerun_failed_ci_which_reruns_failed_and_skipped_runs(repo, gh):
    _runs(gh)
    out, ops, log, _ = say(repo, gh, "author", "/rerun-failed-ci")  # not in the file
    assert out["should-run"] == "false" and out["trigger"] == "rerun-failed-ci"
    assert ops[:2] == [PULL, RUNS] and PERMISSION not in ops
    assert sorted(gh.state.reruns, key=lambda r: r["run_id"]) == [
        {"run_id": 100, "failed_only": True},
        {"run_id": 101, "failed_only": False},  # skipped: the whole run
        {"run_id": 103, "failed_only": True},
    ]
    assert "reran 3 workflow run(s)" in log


def test_rerun_failed_ci_needs_the_grant_write_access_or_authorship(repo, gh):
    _runs(gh)
    out, ops, _, _ = say(repo, gh, "limited", "/rerun-failed-ci")
    assert gh.state.reruns == [] and PULL not in ops
    assert "/rerun-failed-ci needs the PR's author, admin or write" in out["reason"]


def test_tag_and_rerun_ci_labels_runs_and_reruns_everything_but_its_own_workflow(repo, gh):
    _runs(gh)
    out, _, _, _ = say(repo, gh, "slow", "/tag-and-rerun-ci extra")
    assert labels(gh) == ["run-ci", "run-ci-extra"] and out["should-run"] == "true"
    # gpu.yml is this workflow: its fresh run is the plan's matrix, not a rerun of the old one.
    assert sorted(r["run_id"] for r in gh.state.reruns) == [100, 101]


def test_tag_and_rerun_ci_by_the_author_only_reruns(repo, gh):
    _runs(gh)
    out, _, _, _ = say(repo, gh, "author", "/tag-and-rerun-ci")
    assert labels(gh) == [] and out["should-run"] == "false"
    assert sorted(r["run_id"] for r in gh.state.reruns) == [100, 101, 103]


# --- edited comments: the editor is the one authorised -----------------------------------------


def _edited(gh, author, editor, body):
    data = json.loads((HOOKS / "issue_comment.edited.payload.json").read_text())
    data["issue"]["number"] = 7
    data["issue"]["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/7"}
    data["comment"].update(id=gh.add_comment(7, author, body), body=body)
    data["comment"]["user"]["login"] = author
    data["sender"]["login"] = editor
    return data


def test_an_edit_acts_and_is_authorised_on_the_editor(repo, gh):
    out, _, _ = run(
        repo, gh, "issue_comment", _edited(gh, "slow", "writer", "/rerun-test test_b.py")
    )
    assert out["should-run"] == "true"  # a writer edited a non-writer's comment: the writer asks
    out, _, _ = run(
        repo, gh, "issue_comment", _edited(gh, "writer", "slow", "/rerun-test test_b.py")
    )
    assert out["should-run"] == "false" and "slow has 'read' permission" in out["reason"]


# --- what one label may start ------------------------------------------------------------------


def test_a_label_runs_only_allowed_runner_configs_and_at_most_the_configured_jobs(repo, gh):
    event = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    event["sender"]["login"] = "fast"
    out, _, _ = run(repo, gh, "pull_request_target", event,
                    config='[github]\nlabel-runner-configs = ["1-gpu-large"]\n')  # fmt: skip
    assert out["should-run"] == "true"
    assert [r["runner_config"] for r in json.loads(out["matrix"])["include"]] == ["1-gpu-large"]
    assert "1 job on runner config '2-gpu-large' not run" in out["reason"]
    out, _, _ = run(repo, gh, "pull_request_target", event, config="[github]\nlabel-max-jobs = 1\n")
    assert out["should-run"] == "false"
    assert out["reason"].endswith(
        "refused: 2 jobs planned (1 on 1-gpu-large, 1 on 2-gpu-large); a label starts at most 1 "
        "(github.label-max-jobs)"
    )


# --- replies and summaries carry PR-controlled names as text ----------------------------------

EVIL = "[pwn](https://x.example) @org/team <img src=x onerror=alert(1)> ##[error]x` @a `"


def _inert(markdown: str) -> None:
    ours = markdown.replace("(#7)", "").split("\n[plan run](")[0]  # our reference, our link
    for token in tokens(ours):
        assert token.type not in ("link_open", "image", "html_inline", "html_block"), markdown
        if token.type == "text":
            assert not LIVE.search(token.content), token.content


def test_registration_strings_reach_replies_and_the_step_summary_as_text(repo, gh):
    path = repo / R / "models" / "test_evil.py"
    path.write_text(f'register_cuda_ci(est_time=60, stage="{EVIL}", runner_config="1-gpu-large")\n')
    out, _, log, summary = say(repo, gh, "fast", "/tag-run-ci-label")
    assert out["should-run"] == "true" and EVIL in out["reason"]  # the reason as data
    reply = bot_replies(gh)[-1]
    _inert(reply.replace(f"@{'fast'} ", "", 1))  # our own mention of the commenter aside
    _inert(summary)
    assert "##[" not in log.replace("#\u200b#[", "")


# --- cooldowns: a label from someone without write access, at most one run per window ---------


def _labelled_run(gh, run_id, actor, minutes_ago, gpu_ran):
    from datetime import datetime, timedelta, timezone

    from ghstandin.state import Job

    stamp = datetime.now(timezone.utc) - timedelta(minutes=minutes_ago)
    gh.state.runs[run_id] = WorkflowRun(
        run_id, "gpu.yml", stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), head_sha=HEAD,
        event="pull_request_target", actor=actor,
    )  # fmt: skip
    gh.state.jobs[run_id * 10] = Job(run_id * 10, run_id, "plan")
    gpu = "success" if gpu_ran else "skipped"
    gh.state.jobs[run_id * 10 + 1] = Job(run_id * 10 + 1, run_id, "run 1-gpu-large", conclusion=gpu)


def _label_by(login):
    event = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    event["sender"]["login"] = login
    return event


def test_a_label_inside_the_cooldown_of_someone_without_write_access_is_refused(repo, gh):
    _labelled_run(gh, 500, "slow", minutes_ago=30, gpu_ran=True)  # slow: cooldown 60
    gh.state.issues[7].labels = ["run-ci"]
    out, _, _ = run(repo, gh, "pull_request_target", _label_by("slow"))
    assert out["should-run"] == "false" and labels(gh) == []
    assert "slow's last labelled run started at " in out["reason"]
    assert "at most one run per 60 minutes" in out["reason"]
    ops = [c["op"] for c in gh.calls()]
    assert ops[:3] == [
        PERMISSION,
        "actions/list-workflow-runs",
        "actions/list-jobs-for-workflow-run",
    ]


def test_runs_that_stopped_at_plan_or_fell_outside_the_window_do_not_count(repo, gh):
    _labelled_run(gh, 500, "slow", minutes_ago=30, gpu_ran=False)  # refused at plan
    _labelled_run(gh, 501, "slow", minutes_ago=90, gpu_ran=True)  # before the window
    _labelled_run(gh, 502, "fast", minutes_ago=5, gpu_ran=True)  # someone else
    out, _, _ = run(repo, gh, "pull_request_target", _label_by("slow"))
    assert out["should-run"] == "true"


def test_cooldown_zero_or_write_access_is_never_rationed(repo, gh):
    _labelled_run(gh, 500, "fast", minutes_ago=1, gpu_ran=True)
    before = len(gh.calls())
    out, _, _ = run(repo, gh, "pull_request_target", _label_by("fast"))
    assert out["should-run"] == "true" and gh.calls()[before:] == []
    gh.state.roles["slow"] = "write"
    _labelled_run(gh, 501, "slow", minutes_ago=1, gpu_ran=True)
    out, _, _ = run(repo, gh, "pull_request_target", _label_by("slow"))
    assert out["should-run"] == "true"
    assert "actions/list-workflow-runs" not in [c["op"] for c in gh.calls()]


def test_tag_run_ci_label_is_rationed_for_the_one_who_asks(repo, gh):
    _labelled_run(gh, 500, "slow", minutes_ago=10, gpu_ran=True)
    out, _, _, _ = say(repo, gh, "slow", "/tag-run-ci-label")
    assert out["should-run"] == "false" and labels(gh) == []
    assert "at most one run per 60 minutes" in bot_replies(gh)[-1]
