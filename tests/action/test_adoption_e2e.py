"""The adoption recipes of docs/adopting.md end to end, in the action harness against the GitHub
stand-in, on a small sglang-shaped repository (its test files written here).

Recipe 1, the budget report only: examples/adoption/budget-report/ci-budget-diff.yml runs on
`pull_request` (a fork's too) and leaves the report JSON as an artifact; ci-budget-post.yml runs
on `workflow_run` and posts it. The `workflow_run` payload is GitHub's published example
(tests/fixtures/github/webhooks/workflow_run.completed.payload.json, MIT, see SOURCES.md) with
the fields of this run set: what GitHub sends for a `pull_request` run (for a fork,
`pull_requests` is empty).

Stood in by the harness: checkout, artifacts (another run's by `run-id`, as GitHub keeps them),
and `ci-budget/ci-budget@SHA`, which runs this project's snapshot, as GitHub would fetch it.
"""

# ruff: noqa: F811 - the fixtures `project` and `runner_temp` are imported, then requested
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from actionrunner import Runner
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN, READONLY_TOKEN
from gitrepo import git

# The session's project snapshot and shared RUNNER_TEMP (its installed action venv).
from tests.action.test_action_e2e import explain, hook, project, runner_temp  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "examples" / "adoption"
PR = 11
ACTION = "ci-budget/ci-budget"
MAIN = '\n\nif __name__ == "__main__":\n    print()\n'
TESTS = {
    "test/registered/core/test_a.py": 'register_cuda_ci(est_time=300, stage="base-b", runner_config="1-gpu-large")',
    "test/registered/core/test_b.py": 'register_cuda_ci(est_time=200, stage="base-b", runner_config="1-gpu-large")',
}  # fmt: skip


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text + MAIN)


@pytest.fixture
def origin(tmp_path):
    """main: two registered files and the recipe's workflows; `feature`: est_time 300 -> 900
    for one, and a new file."""
    repo = tmp_path / "origin"
    (repo / ".github" / "workflows").mkdir(parents=True)
    for name in ("ci-budget-diff.yml", "ci-budget-post.yml"):
        shutil.copy2(RECIPES / "budget-report" / name, repo / ".github" / "workflows" / name)
    _write(repo, TESTS)
    git(repo, "init", "-q", "-b", "main")
    # As GitHub: a fetch may ask for a commit's trees without their files (--filter=blob:none).
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    changed = {rel: t.replace("est_time=300", "est_time=900") for rel, t in TESTS.items()}
    changed["test/registered/core/test_c.py"] = (
        'register_cuda_ci(est_time=120, stage="base-b", runner_config="1-gpu-large")'
    )
    _write(repo, changed)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "slower")
    git(repo, "checkout", "-q", "-b", "quiet", "main")  # a PR that touches no test file
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    git(repo, "checkout", "-q", "main")
    return repo


def _run(tmp_path, origin, standin, temp, action, event_name, payload, workflow, *,
         token=INSTALLATION_TOKEN, run_id="5001", run_artifacts=None, sha=None):  # fmt: skip
    work = tmp_path / f"run-{run_id}"
    repo = standin.state.repo
    ref = f"refs/pull/{PR}/merge" if event_name == "pull_request" else "refs/heads/main"
    github = {
        "event_name": event_name, "event": payload, "repository": repo,
        "repository_owner": repo.split("/")[0], "token": token,
        "sha": sha or git(origin, "rev-parse", "main"), "ref": ref, "api_url": standin.url,
        "server_url": "https://github.example", "run_id": run_id,
    }  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update(
        CI="true", GITHUB_ACTIONS="true", GITHUB_EVENT_NAME=event_name, GITHUB_REPOSITORY=repo,
        GITHUB_API_URL=standin.url, GITHUB_SERVER_URL="https://github.example",
        GITHUB_SHA=github["sha"], GITHUB_REF=ref, GITHUB_RUN_ID=run_id,
        RUNNER_TEMP=str(temp),
    )  # fmt: skip
    runner = Runner(origin, work, runner_temp=temp, github=github, env=env,
                    actions={ACTION: action}, run_artifacts=run_artifacts or {})  # fmt: skip
    runner.env["GITHUB_EVENT_PATH"] = str(runner.event_path)
    return runner.run_workflow(origin / ".github" / "workflows" / workflow), work / "artifacts"


def _pull_event(standin, origin, fork: bool, branch: str = "feature") -> dict:
    payload = hook("pull_request.synchronize")
    owner, name = standin.state.repo.split("/")
    payload["repository"].update(full_name=standin.state.repo, name=name)
    payload["number"] = PR
    pull = payload["pull_request"]
    pull.update(number=PR, state="open", draft=False)
    pull["head"].update(sha=git(origin, "rev-parse", branch), ref="feature")
    pull["head"]["repo"]["full_name"] = "mallory/hello-gpu" if fork else standin.state.repo
    pull["base"].update(sha=git(origin, "rev-parse", "main"), ref="main")
    return payload


def _workflow_run(standin, origin, fork: bool, run_id: str, head_sha: str | None = None):
    """GitHub's example, as GitHub fills it for a completed `pull_request` run."""
    payload = hook("workflow_run.completed")
    owner, name = standin.state.repo.split("/")
    payload["repository"].update(full_name=standin.state.repo, name=name)
    run = payload["workflow_run"]
    head_repo = "mallory/hello-gpu" if fork else standin.state.repo
    run.update(id=int(run_id), name="ci-budget-diff", event="pull_request", status="completed",
               conclusion="success", head_branch="feature",
               head_sha=head_sha or git(origin, "rev-parse", "feature"))  # fmt: skip
    run["head_repository"].update(full_name=head_repo, name=head_repo.split("/")[1])
    run["head_repository"]["owner"]["login"] = head_repo.split("/")[0]
    # GitHub lists the run's pull requests only when the head is in the base repository.
    run["pull_requests"] = (
        [] if fork else [{"number": PR, "id": 1, "url": "x", "head": {}, "base": {}}]
    )
    return payload


def _budget_comments(standin):
    return [c for c in standin.comments(PR) if "<!-- ci-budget:budget -->" in c.body]


@pytest.mark.slow
@pytest.mark.parametrize("fork", [True, False], ids=["fork", "same-repository"])
def test_budget_report_recipe_posts_through_workflow_run(
    tmp_path,
    origin,
    github_standin,
    runner_temp,
    project,
    fork,
):
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature",
                            head_repo="mallory/hello-gpu" if fork else None)  # fmt: skip
    github_standin.add_pull(PR + 1, head_sha="0" * 40, head_ref="feature")  # same branch name
    # pull_request: the fork's read-only token; the job has nothing to write anyway
    token = READONLY_TOKEN if fork else INSTALLATION_TOKEN
    jobs, store = _run(tmp_path, origin, github_standin, runner_temp, project, "pull_request",
                       _pull_event(github_standin, origin, fork), "ci-budget-diff.yml",
                       token=token, sha=head)  # fmt: skip
    assert jobs["budget"][0].result == "success", explain(jobs)
    assert jobs["budget"][0].head == head
    # two trees, not the history: the head at depth 1 and the base commit alone, no blobs
    work = tmp_path / "run-5001" / "budget-0" / "workspace"
    assert git(work, "rev-list", "--count", "HEAD") == "1"
    assert git(work, "rev-parse", "--is-shallow-repository") == "true"
    assert git(work, "config", "remote.origin.partialclonefilter") == "blob:none"
    assert _budget_comments(github_standin) == []
    artifact = json.loads((store / "ci-budget-budget" / "ci-budget-report.json").read_text())
    assert artifact["kind"] == "budget"

    payload = _workflow_run(github_standin, origin, fork, "5001")
    jobs, _ = _run(tmp_path, origin, github_standin, runner_temp, project, "workflow_run",
                   payload, "ci-budget-post.yml", run_id="6001",
                   run_artifacts={"5001": store})  # fmt: skip
    assert jobs["post"][0].result == "success", explain(jobs)
    assert jobs["post"][0].head is None  # no checkout: nothing of the PR on this runner
    [comment] = _budget_comments(github_standin)
    assert comment.login == BOT_LOGIN
    assert "test_a.py" in comment.body and "test_c.py" in comment.body
    assert _budget_comments_on(github_standin, PR + 1) == []
    assert github_standin.invalid == []


def _assert_inert(body: str, blob: str) -> None:
    """Nothing from the artifact is live: one comment marker (ours), no HTML but the tags
    ci-budget writes, and every link ci-budget's own, to a line on the run's head commit."""
    from tests.render.test_untrusted import ALLOWED_TAGS, LIVE, tokens

    assert body.count("<!--") == 1 and body.startswith("<!-- ci-budget:budget -->\n")
    for token in tokens(body):
        if token.type == "link_open":
            href = token.attrs["href"]
            assert href.startswith(blob) and not set(href) & set("<>\"' "), href
        assert token.type not in ("image", "code_block", "blockquote_open")
        if token.type in ("html_block", "html_inline") and "ci-budget:budget" not in token.content:
            assert set(re.findall(r"<[^<>]*>", token.content)) <= ALLOWED_TAGS, token.content
        if token.type == "text":
            assert not LIVE.search(token.content), token.content


def _budget_comments_on(standin, number):
    return [c for c in standin.comments(number) if "<!-- ci-budget:budget -->" in c.body]


@pytest.mark.slow
def test_poster_treats_the_artifact_as_data(
    tmp_path,
    origin,
    github_standin,
    runner_temp,
    project,
):
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", head_repo="mallory/hello-gpu")
    jobs, store = _run(tmp_path, origin, github_standin, runner_temp, project, "pull_request",
                       _pull_event(github_standin, origin, True), "ci-budget-diff.yml",
                       token=READONLY_TOKEN, sha=head)  # fmt: skip
    assert jobs["budget"][0].result == "success", explain(jobs)
    # The fork's run controls the artifact: markup in every text it can reach.
    path = store / "ci-budget-budget" / "ci-budget-report.json"
    report = json.loads(path.read_text())
    evil = "@octo-org/admins [x](https://evil.example) <img src=x onerror=alert(1)> <!-- ci-budget:run -->"
    report["base_ref"] = evil
    report["changes"][0]["file"] = "test/registered/" + evil + ".py"
    path.write_text(json.dumps(report))
    payload = _workflow_run(github_standin, origin, True, "5001")
    jobs, _ = _run(tmp_path, origin, github_standin, runner_temp, project, "workflow_run",
                   payload, "ci-budget-post.yml", run_id="6001",
                   run_artifacts={"5001": store})  # fmt: skip
    assert jobs["post"][0].result == "success", explain(jobs)
    [comment] = _budget_comments(github_standin)
    _assert_inert(comment.body, f"https://github.example/{github_standin.state.repo}/blob/{head}/")
    assert "@octo-org/admins" not in comment.body and "](https://evil" not in comment.body

    # Not a report at all: refused in one line, nothing posted.
    path.write_text(json.dumps({"kind": "budget", "changes": "all of them"}))
    before = len(github_standin.comments(PR))
    jobs, _ = _run(tmp_path, origin, github_standin, runner_temp, project, "workflow_run",
                   payload, "ci-budget-post.yml", run_id="6002",
                   run_artifacts={"5001": store})  # fmt: skip
    assert jobs["post"][0].result == "failure"
    assert "not a ci-budget budget report: changes" in explain(jobs)
    assert len(github_standin.comments(PR)) == before


@pytest.mark.slow
def test_poster_finds_no_pull_request_for_a_head_that_is_not_one(
    tmp_path,
    origin,
    github_standin,
    runner_temp,
    project,
):
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", head_repo="mallory/hello-gpu")
    jobs, store = _run(tmp_path, origin, github_standin, runner_temp, project, "pull_request",
                       _pull_event(github_standin, origin, True), "ci-budget-diff.yml",
                       token=READONLY_TOKEN, sha=head)  # fmt: skip
    # A run whose head is another commit on the same branch (the PR moved on): no PR matches.
    payload = _workflow_run(github_standin, origin, True, "5001", head_sha="1" * 40)
    jobs, _ = _run(tmp_path, origin, github_standin, runner_temp, project, "workflow_run",
                   payload, "ci-budget-post.yml", run_id="6001",
                   run_artifacts={"5001": store})  # fmt: skip
    assert jobs["post"][0].result == "failure"
    assert "no open pull request has 111111111111 at the head of mallory/hello-gpu:feature" in (
        explain(jobs)
    )
    assert _budget_comments(github_standin) == []


@pytest.mark.slow
def test_a_pr_that_changes_nothing_watched_gets_no_budget_comment_until_one_exists(
    tmp_path, origin, github_standin, runner_temp, project
):
    head = git(origin, "rev-parse", "quiet")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature")
    jobs, store = _run(tmp_path, origin, github_standin, runner_temp, project, "pull_request",
                       _pull_event(github_standin, origin, False, "quiet"), "ci-budget-diff.yml",
                       sha=head)  # fmt: skip
    assert jobs["budget"][0].result == "success", explain(jobs)
    payload = _workflow_run(github_standin, origin, False, "5001", head_sha=head)
    for run_id in ("6001", "6002"):
        jobs, _ = _run(tmp_path, origin, github_standin, runner_temp, project, "workflow_run",
                       payload, "ci-budget-post.yml", run_id=run_id,
                       run_artifacts={"5001": store})  # fmt: skip
        assert jobs["post"][0].result == "success", explain(jobs)
        if run_id == "6001":  # nothing changed that ci-budget watches: no comment
            assert _budget_comments(github_standin) == []
            assert "no budget comment on " in explain(jobs)
            # an earlier push changed an est_time and got a comment; this push reverted it
            github_standin.add_comment(PR, BOT_LOGIN, "<!-- ci-budget:budget -->\nest_time +600s")
    [comment] = _budget_comments(github_standin)  # updated: the change is gone
    assert "est_time +600s" not in comment.body and comment.login == BOT_LOGIN


def test_the_documented_pin_command_pins_every_example_file(tmp_path):
    """docs/adopting.md, "Pinning ci-budget": its sed, run on copies of the example files,
    leaves no placeholder; run again with a newer SHA, it updates the pin."""
    doc = (ROOT / "docs" / "adopting.md").read_text()
    [command] = [line.strip() for line in doc.splitlines() if line.strip().startswith("sed -i -E")]
    files = sorted(RECIPES.glob("*/*.yml"))
    for path in files:
        shutil.copy2(path, tmp_path / f"{path.parent.name}-{path.name}")
    placeholders = sum(p.read_text().count("@" + "0" * 40) for p in files)
    assert placeholders == sum(p.read_text().count("# ci-budget-pin") for p in files) > 0
    for sha in ("1" * 40, "2" * 40):
        line = command.replace("OWNER", "sgl-project").replace(".github/workflows/", "")
        done = subprocess.run(["bash", "-c", f"sha={sha}; {line}"], cwd=tmp_path,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        text = "".join(p.read_text() for p in sorted(tmp_path.glob("*.yml")))
        assert text.count(f"uses: sgl-project/ci-budget@{sha} # ci-budget-pin") == placeholders
        assert "0" * 40 not in text
