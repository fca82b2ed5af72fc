"""`ci-budget plan` as a real subprocess: runner environment variables, an event file built from
GitHub's example payloads (tests/fixtures/github/webhooks), and the local GitHub stand-in."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN, READONLY_TOKEN

HOOKS = Path(__file__).parent / "fixtures" / "github" / "webhooks"
R = "test/registered/"
PR_HEAD = "feedfacefeedfacefeedfacefeedfacefeedface"
MAIN = 'if __name__ == "__main__":\n    main()\n'

PERMISSION = "repos/get-collaborator-permission-level"
PULL = "pulls/get"
REACT = "reactions/create-for-issue-comment"
REPLY = "issues/create-comment"
LIST = "issues/list-comments"  # a refusal is replied once per person and PR


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    files = {
        "models/test_a.py": 'register_cuda_ci(est_time=300, stage="base-b", runner_config="1-gpu-large")',
        "models/test_b.py": 'register_cuda_ci(est_time=900, stage="base-c", runner_config="2-gpu-large")',
        "ops/test_a.py": 'register_cuda_ci(est_time=60, stage="base-b", runner_config="1-gpu-large")',
    }
    for rel, line in files.items():
        path = root / R / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line + "\n" + MAIN)
    (root / ".git").mkdir()
    return root


def read_outputs(path: Path) -> dict[str, str]:
    """Parse GITHUB_OUTPUT's `key<<DELIM ... DELIM` blocks."""
    out, lines = {}, path.read_text().split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"([\w-]+)<<(\S+)", lines[i])
        if m:
            end = lines.index(m.group(2), i + 1)
            out[m.group(1)] = "\n".join(lines[i + 1 : end])
            i = end
        i += 1
    return out


def run_plan(repo, event, payload, standin=None, token=INSTALLATION_TOKEN, args=(), **env_extra):
    work = repo.parent
    event_path = work / "event.json"
    if isinstance(payload, (dict, list)):
        event_path.write_text(json.dumps(payload))
    elif payload is not None:
        event_path.write_text(payload)
    output, summary = work / "output.txt", work / "summary.md"
    output.unlink(missing_ok=True)
    summary.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(
        GITHUB_EVENT_NAME=event,
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_REPOSITORY=standin.state.repo if standin else "octo-org/hello-gpu",
        GITHUB_API_URL=standin.url if standin else "http://127.0.0.1:9",
        GITHUB_SERVER_URL="https://github.example",
        GITHUB_TOKEN=token,
        GITHUB_OUTPUT=str(output),
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_SHA="d" * 40,
        GITHUB_RUN_ID="77",
        CI_BUDGET_COMMENT_LOGIN=BOT_LOGIN,  # as the action sets it for the workflow's token
        **env_extra,
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "plan", "--root", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert token not in proc.stdout + proc.stderr
    outputs = read_outputs(output)
    assert outputs["should-run"] in ("true", "false")
    assert summary.read_text().count("\n") == 2  # one line, then a blank one
    return proc, outputs


def comment_event(standin, login, body, number=7, **user):
    """GitHub's issue_comment example on a PR, pointing at a comment the stand-in holds."""
    comment_id = standin.add_comment(number, login, body, user.get("type", "User"))
    data = json.loads((HOOKS / "issue_comment.created.on-pull-request.payload.json").read_text())
    data["issue"]["number"] = number
    data["comment"].update(id=comment_id, body=body)
    for who in (data["comment"]["user"], data["sender"]):
        who.update(login=login, **user)
    return data


def ops(standin):
    return [c["op"] for c in standin.calls()]


def reactions(standin, number=7):
    return [tuple(r) for c in standin.comments(number) for r in c.reactions]


def replies(standin, number=7):
    return [c.body for c in standin.comments(number) if c.login == BOT_LOGIN]


@pytest.mark.parametrize("role", ["admin", "maintain"])  # write and triage: tests/test_plan.py
def test_rerun_test_by_a_writer_runs_pinned_to_pulls_get_head(repo, github_standin, role):
    github_standin.add_pull(7, head_sha=PR_HEAD)
    github_standin.state.roles["alice"] = role
    event = comment_event(github_standin, "alice", "/rerun-test models/test_a.py::TestA.test_x")
    proc, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "true" and out["trigger"] == "rerun-test"
    assert out["head-sha"] == PR_HEAD and out["pr-number"] == "7"
    [row] = json.loads(out["matrix"])["include"]
    assert row["specs"] == [R + "models/test_a.py::TestA::test_x"]
    assert row["spec_args"] == R + "models/test_a.py::TestA::test_x"
    assert row["runs_on"] == ["self-hosted", "1-gpu-large"] and row["partition"] == "0/1"
    # First: did ci-budget refuse alice on this PR before (one page of comments)?
    assert ops(github_standin) == [LIST, PERMISSION, PULL, REACT, REPLY]
    assert out["calls"] == "5"
    assert reactions(github_standin) == [("github-actions[bot]", "eyes")]
    [reply] = replies(github_standin)
    assert reply.startswith(f"@alice rerunning at `{PR_HEAD}` (#7)")
    assert "`1-gpu-large` (runs-on: self-hosted, 1-gpu-large)" in reply
    assert "https://github.example/octo-org/hello-gpu/actions/runs/77" in reply
    assert "github-api-calls: 5" in proc.stdout


@pytest.mark.parametrize("role", ["read", "none", None])
def test_rerun_test_by_a_non_writer_is_refused_without_reading_the_pr(repo, github_standin, role):
    github_standin.add_pull(7, head_sha=PR_HEAD, user="mallory")  # the PR author, even
    if role == "none":
        github_standin.state.users.add("mallory")
    elif role is not None:  # None: not a collaborator at all, the endpoint answers 404
        github_standin.state.roles["mallory"] = role
    event = comment_event(github_standin, "mallory", "/rerun-test test_b.py")
    event["comment"]["author_association"] = "CONTRIBUTOR"
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "false" and out["head-sha"] == ""
    assert json.loads(out["matrix"]) == {"include": []}
    assert ops(github_standin) == [LIST, PERMISSION, REACT, REPLY]
    assert reactions(github_standin) == [("github-actions[bot]", "confused")]
    [reply] = replies(github_standin)
    assert reply.startswith("<!-- ci-budget:refused-mallory -->\n@mallory `/rerun-test` refused:")
    assert "runs need admin or write" in reply


def test_two_specs_on_two_runner_configs_give_two_rows(repo, github_standin):
    github_standin.add_pull(7, head_sha=PR_HEAD)
    github_standin.state.roles["alice"] = "write"
    event = comment_event(github_standin, "alice", "/rerun-test models/test_a.py test_b.py")
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    rows = json.loads(out["matrix"])["include"]
    assert [(r["runner_config"], r["specs"]) for r in rows] == [
        ("1-gpu-large", [R + "models/test_a.py"]),
        ("2-gpu-large", [R + "models/test_b.py"]),
    ]


def test_bad_specs_are_answered_with_every_reason(repo, github_standin):
    github_standin.add_pull(7, head_sha=PR_HEAD)
    github_standin.state.roles["alice"] = "admin"
    body = "/rerun-test test_a.py ../../etc/passwd models/*.py x;curl$IFS@evil"
    event = comment_event(github_standin, "alice", body)
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "false"
    assert ops(github_standin) == [LIST, PERMISSION, REACT, REPLY]
    [reply] = replies(github_standin)
    assert reply.splitlines()[1:4] == [
        f"- `test_a.py`: matches 2 registered files: `{R}models/test_a.py`, `{R}ops/test_a.py`;"
        " give the path",
        "- `../../etc/passwd`: '..' is not allowed; name a file inside the test tree",
        "- `models/*.py`: no test file matches `models/*.py` from the repository root or `test/`"
        " (a glob matches `test_*.py` files only)",
    ]
    assert "- `x;curl$IFS@evil`: contains the shell metacharacter ';'" in reply


def test_closed_pr_is_refused(repo, github_standin):
    github_standin.add_pull(7, state="closed")
    github_standin.state.roles["alice"] = "admin"
    event = comment_event(github_standin, "alice", "/rerun-test test_b.py")
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "false" and "pull request #7 is closed" in out["reason"]
    assert ops(github_standin) == [LIST, PERMISSION, PULL, REACT, REPLY]
    assert reactions(github_standin) == [("github-actions[bot]", "confused")]


def test_api_failure_during_authorisation_refuses(repo, github_standin):
    github_standin.add_pull(7)
    github_standin.state.roles["alice"] = "admin"
    # A rate limit longer than the cap: the client gives up at once rather than wait an hour.
    github_standin.secondary_rate_limit(PERMISSION, retry_after=3600)
    event = comment_event(github_standin, "alice", "/rerun-test test_b.py")
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "false"
    assert "could not check alice's permission" in out["reason"]
    assert PULL not in ops(github_standin)


@pytest.mark.parametrize("case", ["bot-type", "bot-login", "plain-issue", "not-a-command"])
def test_silent_cases_make_no_api_calls(repo, github_standin, case):
    github_standin.add_pull(7)
    github_standin.state.roles["alice"] = "admin"
    login = "renovate[bot]" if case == "bot-login" else "alice"
    user = {"type": "Bot"} if case == "bot-type" else {}
    body = "please rerun" if case == "not-a-command" else "/rerun-test test_b.py"
    event = comment_event(github_standin, login, body, **user)
    if case == "plain-issue":
        del event["issue"]["pull_request"]
    proc, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "false" and out["trigger"] == "none"
    assert ops(github_standin) == [] and reactions(github_standin) == []
    assert replies(github_standin) == []
    assert "should-run: false" in proc.stdout


def test_read_only_token_still_decides_and_warns(repo, github_standin):
    github_standin.add_pull(7, head_sha=PR_HEAD)
    github_standin.state.roles["alice"] = "write"
    event = comment_event(github_standin, "alice", "/rerun-test test_b.py")
    proc, out = run_plan(repo, "issue_comment", event, github_standin, token=READONLY_TOKEN)
    assert out["should-run"] == "true" and out["head-sha"] == PR_HEAD
    assert "warning: cannot react to comment" in proc.stderr
    assert "warning: cannot reply on #7" in proc.stderr


def _pr_event(action, labels, label=None, **pr):
    data = json.loads((HOOKS / f"pull_request.{action}.payload.json").read_text())
    data["pull_request"]["labels"] = [{"name": n} for n in labels]
    data["pull_request"].update(pr)
    if label is not None:
        data["label"]["name"] = label
    return data


def test_run_ci_label_runs_suites_at_the_payload_head(repo, github_standin):
    github_standin.state.roles["Codertocat"] = "write"  # who applied it: the one API call
    event = _pr_event("labeled", ["run-ci"], "run-ci")
    proc, out = run_plan(repo, "pull_request", event, github_standin)
    assert out["should-run"] == "true" and out["trigger"] == "run-ci"
    assert out["head-sha"] == event["pull_request"]["head"]["sha"] and out["pr-number"] == "2"
    rows = json.loads(out["matrix"])["include"]
    assert [(r["suite"], r["partition"], r["specs"]) for r in rows] == [
        ("base-b-test-1-gpu-large", "0/1", []),
        ("base-c-test-2-gpu-large", "0/1", []),
    ]
    assert ops(github_standin) == [PERMISSION] and out["calls"] == "1"


@pytest.mark.parametrize(
    "event, expect",
    [
        (_pr_event("labeled", ["bug"], "bug"), "not a gating label"),
        (_pr_event("synchronize", ["bug"]), "carries no gating label"),
        (_pr_event("synchronize", ["run-ci"], draft=True), "is a draft"),
    ],
)
def test_pull_request_events_that_do_not_run(repo, event, expect):
    _, out = run_plan(repo, "pull_request", event)
    assert out["should-run"] == "false" and expect in out["reason"]


def test_synchronize_with_the_label_runs(repo):
    _, out = run_plan(repo, "pull_request", _pr_event("synchronize", ["bug", "run-ci"]))
    assert out["should-run"] == "true" and out["trigger"] == "pull-request"


def test_workflow_dispatch_runs_inputs_at_github_sha(repo):
    data = json.loads((HOOKS / "workflow_dispatch.payload.json").read_text())
    data["inputs"] = {"suites": "base-c-test-2-gpu-large", "specs": "ops/test_a.py"}
    proc, out = run_plan(repo, "workflow_dispatch", data, args=["--format", "json"])
    assert out["should-run"] == "true" and out["trigger"] == "dispatch"
    assert out["head-sha"] == "d" * 40
    plan = json.loads(proc.stdout)
    assert [(r["suite"], r["specs"]) for r in plan["matrix"]] == [
        (None, [R + "ops/test_a.py"]),
        ("base-c-test-2-gpu-large", []),
    ]


def test_command_line_suites_override_the_event(repo):
    _, out = run_plan(repo, "workflow_run", None, args=["--suite", "base-b-test-1-gpu-large"])
    assert out["should-run"] == "true"
    assert [r["suite"] for r in json.loads(out["matrix"])["include"]] == ["base-b-test-1-gpu-large"]


@pytest.mark.parametrize(
    "event, payload, expect",
    [
        ("workflow_run", {"action": "completed"}, "workflow_run: not an event ci-budget plans"),
        ("pull_request", "{not json", "pull_request: "),
        ("pull_request", "[1]", "holds a JSON list, not an object"),
        ("issue_comment", {"action": "created"}, "issue_comment: malformed event: payload has no"),
        ("pull_request", None, "cannot read"),
    ],
)
def test_unknown_or_malformed_events_exit_0_without_running(repo, tmp_path, event, payload, expect):
    (tmp_path / "event.json").unlink(missing_ok=True)
    proc, out = run_plan(repo, event, payload)
    assert out["should-run"] == "false" and expect in out["reason"]
    assert expect in proc.stdout


# --- the commit is bound to the comment ------------------------------------------------------

OLDER = "c0ffee00" * 5


def test_rerun_test_refused_when_the_branch_was_pushed_after_the_comment(repo, github_standin):
    # The comment is at 15:20:21 (the payload's created_at); the author pushes at 15:20:30,
    # before plan reads the PR. The head GitHub reports now is not what the maintainer saw.
    github_standin.add_pull(7, head_sha=PR_HEAD, head_pushed_at="2019-05-15T15:20:30Z")
    github_standin.state.roles["alice"] = "write"
    event = comment_event(github_standin, "alice", "/rerun-test models/test_a.py")
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "false" and out["head-sha"] == ""
    [reply] = replies(github_standin)
    assert f"`{PR_HEAD}`, is not provably older than this comment" in reply
    assert f"`/rerun-test@{PR_HEAD} models/test_a.py`" in reply


def test_rerun_test_at_sha_runs_that_commit_after_checking_it_is_the_prs(repo, github_standin):
    github_standin.add_pull(7, head_sha=PR_HEAD, head_pushed_at="2019-05-15T15:20:30Z",
                            commits=[OLDER, PR_HEAD])  # fmt: skip
    github_standin.state.roles["alice"] = "write"
    event = comment_event(github_standin, "alice", f"/rerun-test@{OLDER} models/test_a.py")
    _, out = run_plan(repo, "issue_comment", event, github_standin)
    assert out["should-run"] == "true" and out["head-sha"] == OLDER
    assert ops(github_standin) == [LIST, PERMISSION, PULL, "pulls/list-commits", REACT, REPLY]
    [reply] = replies(github_standin)
    assert reply.startswith(f"@alice rerunning at `{OLDER}` (#7)")
    assert github_standin.invalid == []


def test_after_a_first_refusal_more_comments_cost_one_api_call_each(repo, github_standin):
    github_standin.add_pull(7, head_sha=PR_HEAD)
    github_standin.state.roles["mallory"] = "read"
    for i in range(4):
        before = len(github_standin.calls())
        event = comment_event(github_standin, "mallory", "/rerun-test test_b.py")
        _, out = run_plan(repo, "issue_comment", event, github_standin)
        assert out["should-run"] == "false"
        spent = [c["op"] for c in github_standin.calls()[before:]]
        # The first: look for our earlier refusal, ask the permission, react, reply. After it:
        # the look finds the reply, and that is all (no permission call, reaction or reply).
        assert spent == ([LIST, PERMISSION, REACT, REPLY] if i == 0 else [LIST]), i
        assert out["calls"] == str(len(spent))
    assert len(replies(github_standin)) == 1
    assert reactions(github_standin) == [("github-actions[bot]", "confused")]
    github_standin.state.roles["eve"] = "read"  # someone else still gets their one reply
    event = comment_event(github_standin, "eve", "/rerun-test test_b.py")
    run_plan(repo, "issue_comment", event, github_standin)
    assert len(replies(github_standin)) == 2
