"""Who may trigger what, end to end through `plan` against the GitHub stand-in: sglang's
`.github/CI_PERMISSIONS.json` users of each kind, the label's sender, edited comments, and what
one label may start. Payloads are GitHub's examples
(tests/fixtures/github/webhooks); `plan` runs in this process, its requests over real HTTP."""

from __future__ import annotations

import io
import json

import pytest
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN

from ci_budget.app.plan import PlanOptions, plan
from ci_budget.app.settings import Settings, Sink
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
REMOVE = "issues/remove-label"
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


# --- a gating label applied by hand --------------------------------------------------------------


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


def test_can_tag_run_ci_label_lets_a_label_count_without_write_access_any_number_of_times(repo, gh):
    # slow: can_tag_run_ci_label, cooldown 60, read access; no run of theirs is looked up.
    for _ in range(2):
        before = len(gh.calls())
        out, _, _ = run(repo, gh, "pull_request_target", _label_by("slow"))
        assert out["should-run"] == "true" and gh.calls()[before:] == []
    out, _, _ = run(repo, gh, "pull_request_target", _label_by("limited"))
    assert out["should-run"] == "false"
    assert "a gating label counts from admin or write, or can_tag_run_ci_label" in out["reason"]


def _label_by(login):
    event = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    event["sender"]["login"] = login
    return event


@pytest.mark.parametrize("who", ["renovate[bot]", "denied"])
def test_a_label_from_a_bot_or_a_denied_user_is_removed_without_a_permission_call(repo, gh, who):
    gh.state.issues[7].labels = ["run-ci"]
    event = _pr_event("labeled", ["run-ci"], "run-ci", number=7)
    event["sender"].update(login=who, type="Bot" if who.endswith("[bot]") else "User")
    out, _, _ = run(repo, gh, "pull_request_target", event,
                    config='[github]\ndeny-users = ["denied"]\n')  # fmt: skip
    assert out["should-run"] == "false" and labels(gh) == []
    assert PERMISSION not in [c["op"] for c in gh.calls()]


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
    off = f'register_cuda_ci(est_time=60, stage="base-b", runner_config="1-gpu-large", disabled="{EVIL}")'
    (repo / R / "models" / "test_off.py").write_text(off + "\n")
    out, log, summary = run(repo, gh, "pull_request_target", _label_by("fast"))
    assert out["should-run"] == "true" and EVIL in out["reason"]  # the reason as data
    _inert(summary)
    assert "##[" not in log.replace("#\u200b#[", "")
    out, _, log, summary = say(repo, gh, "fast", "/rerun-test models/test_off.py")
    assert out["should-run"] == "true"
    reply = bot_replies(gh)[-1]
    assert "is disabled (" in reply  # the registration's reason, in a note
    _inert(reply.replace(f"@{'fast'} ", "", 1))  # our own mention of the commenter aside
    _inert(summary)
    assert "##[" not in log.replace("#\u200b#[", "")
