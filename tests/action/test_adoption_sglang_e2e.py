"""sglang's own PR workflows (tests/fixtures/sglang/workflows, verbatim) with ci-budget's three
adoption recipes installed beside them, in the action harness against the GitHub stand-in: each
event goes to every workflow of the repository that GitHub would start for it.

Recipe 1: ci-budget-post.yml (its poster publishes recipe 2's report too). Recipe 2: sglang's
stage step as examples/adoption/stage-jobs/ changes it, and report-job.yml's job in pr-test.yml.
Recipe 3: examples/adoption/own-triggers/ci-budget.yml. The scripts the workflows call are
stand-ins written for these tests (tests/sglang_ci.py).

Trimmed, because the harness cannot run them (TRIMMED below; SOURCES.md lists them too): the
steps using sglang's composite actions under .github/actions/, which are not in the fixture
(maintenance gate, fast-fail health check, waiting on earlier stages by polling the jobs API,
Rust-extension download, core-dump upload); pr-gate.yml's rate-limit script, which reads
actions/get-workflow-run, an operation the stand-in's GitHub description does not have; and
notify-pr-states' `gh workflow run` of pr-states.yml, which is not in the fixture; and
check-changes' lookup of sgl-project/sglang-ci-stats' head commit, another repository on the
network (its output stays empty: the workflow's own fallback to in-source est_time).
"""

# ruff: noqa: F811 - the fixtures `project` and `runner_temp` are imported, then requested
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from actionrunner import Runner, listens, load_yaml
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN, READONLY_TOKEN
from gitrepo import git

from tests import sglang_ci
from tests.action.test_action_e2e import hook, project, runner_temp  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "examples" / "adoption"
HARNESS_BIN = ROOT / "tests" / "actionrunner" / "bin"
ACTION = "ci-budget/ci-budget"
PR = 11
MAINTAINER, AUTHOR = "maintainer", "contributor"
WATCHED = "base-b-test-1-gpu-large"  # the suite whose file the PR changes
TRIMMED = {
    "./.github/actions/check-maintenance": {},
    "./.github/actions/check-pr-test-health": {},
    "./.github/actions/wait-for-jobs": {"result": "success"},
    "./.github/actions/download-rust-ext": {},
    "./.github/actions/upload-cuda-coredumps": {},
    "Enforce rate limit for low-permission actors (optional)": {},
    "Dispatch pr-states refresh": {},
    "Resolve sglang-ci-stats SHA": {"sha": ""},
}


def _recipe2_stage(text: str, steps_file: str) -> str:
    """_pr-test-stage.yml with its "Run test" step replaced by the recipe's steps."""
    start = text.index("      - name: Run test\n")
    end = text.index("      - name: Run extra pytest\n")
    lines = (RECIPES / "stage-jobs" / steps_file).read_text().splitlines()
    steps = [f"      {line}" if line else "" for line in lines if not line.startswith("#")]
    return text[:start] + "\n".join(steps).strip("\n") + "\n\n" + text[end:]


def _recipe2_report_job(text: str) -> str:
    job = (RECIPES / "stage-jobs" / "report-job.yml").read_text()
    body = "\n".join(f"  {line}" if line else "" for line in job.splitlines())
    return text.rstrip("\n") + "\n\n" + body + "\n"


@pytest.fixture(params=["run-test-step.yml"])
def origin(tmp_path, request):
    """(recipe 2's stage steps: the drop-in, or run_suite.py kept and its output read)"""
    """main: sglang's workflows with the recipes installed; `feature`: the package changed and
    one test file's est_time raised."""
    repo = sglang_ci.make_repo(tmp_path / "origin")
    flows = repo / ".github" / "workflows"
    stage = flows / "_pr-test-stage.yml"
    stage.write_text(_recipe2_stage(stage.read_text(), request.param))
    (flows / "pr-test.yml").write_text(_recipe2_report_job((flows / "pr-test.yml").read_text()))
    post = (RECIPES / "budget-report" / "ci-budget-post.yml").read_text()
    post = post.replace("workflows: [ci-budget-diff]", "workflows: [ci-budget-diff, PR Test Base]")
    (flows / "ci-budget-post.yml").write_text(post)
    (flows / "ci-budget.yml").write_text((RECIPES / "own-triggers" / "ci-budget.yml").read_text())
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    sglang_ci.write(repo, "python/pkg/__init__.py", 'VERSION = "from-the-pr"\n')
    watched = repo / sglang_ci.test_path(WATCHED)
    watched.write_text(watched.read_text().replace("est_time=60", "est_time=90"))
    git(repo, "commit", "-q", "-am", "change")
    git(repo, "checkout", "-q", "main")
    return repo


class Repo:
    """GitHub for one repository: an event goes to each workflow that listens for it."""

    def __init__(self, tmp_path, origin, standin, temp, action):
        self.tmp, self.origin, self.standin, self.temp = tmp_path, origin, standin, temp
        self.action, self.runs = action, 0
        self.stores: dict[str, Path] = {}
        self.run_ids: dict[str, str] = {}  # workflow file -> its latest run

    def deliver(self, event_name: str, payload: dict, *, token=INSTALLATION_TOKEN, sha=None,
                only: str | None = None) -> dict[str, dict]:  # fmt: skip
        """{workflow file: its jobs} for every workflow started by the event."""
        started = {}
        for path in sorted((self.origin / ".github" / "workflows").glob("*.yml")):
            wf = load_yaml(path)
            if (only and path.name != only) or not listens(wf, event_name, payload):
                continue
            started[path.name] = self._run(path, wf, event_name, payload, token, sha)
        return started

    def _run(self, path, wf, event_name, payload, token, sha):
        self.runs += 1
        run_id = str(7000 + self.runs)
        work = self.tmp / f"run-{run_id}"
        repo = self.standin.state.repo
        sha = sha or git(self.origin, "rev-parse", "main")
        ref = f"refs/pull/{PR}/merge" if event_name == "pull_request" else "refs/heads/main"
        github = {"event_name": event_name, "event": payload, "repository": repo,
                  "repository_owner": repo.split("/")[0], "token": token, "sha": sha,
                  "ref": ref, "api_url": self.standin.url, "server_url": "https://github.example",
                  "run_id": run_id, "head_ref": "feature", "ref_name": "main",
                  "actor": payload.get("sender", {}).get("login", MAINTAINER)}  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
        # The runner image: python3 with PyYAML and requests, gh and jq; no ci-budget (the
        # stage step's `command: setup` puts one on PATH, ahead of the failing stub).
        tools = [str(HARNESS_BIN), str(_no_ci_budget(self.tmp)), os.path.dirname(os.sys.executable)]
        env.update(
            PATH=os.pathsep.join([*tools, env.get("PATH", "")]), CI="true",
            GITHUB_ACTIONS="true", GITHUB_EVENT_NAME=event_name, GITHUB_REPOSITORY=repo,
            GITHUB_API_URL=self.standin.url, GITHUB_SERVER_URL="https://github.example",
            GITHUB_SHA=sha, GITHUB_REF=ref, GITHUB_RUN_ID=run_id, RUNNER_TEMP=str(self.temp),
            GITHUB_WORKFLOW=str(wf.get("name", path.name)),
        )  # fmt: skip
        runner = Runner(self.origin, work, runner_temp=self.temp, github=github, env=env,
                        actions={ACTION: self.action}, run_artifacts=self.stores,
                        replace=TRIMMED, expand_scripts=True)  # fmt: skip
        runner.env["GITHUB_EVENT_PATH"] = str(runner.event_path)
        jobs = runner.run_workflow(path)
        self.stores[run_id] = work / "artifacts"
        self.run_ids[path.name] = run_id
        return jobs


def _no_ci_budget(tmp: Path) -> Path:
    """A folder whose `ci-budget` fails, ahead of this interpreter's (which has the one the
    test session installed): only what a step puts on PATH before it runs."""
    folder = tmp / "no-ci-budget"
    if not folder.is_dir():
        folder.mkdir()
        stub = folder / "ci-budget"
        stub.write_text('#!/bin/sh\necho "ci-budget: not on this runner image" >&2\nexit 127\n')
        stub.chmod(0o755)
    return folder


def _pull_event(standin, origin, action, *, fork, label=None, branch="feature",
                labels=("run-ci",)) -> dict:  # fmt: skip
    payload = hook("pull_request.labeled" if label else "pull_request.synchronize")
    owner, name = standin.state.repo.split("/")
    payload["repository"].update(full_name=standin.state.repo, name=name)
    payload.update(action=action, number=PR)
    payload["sender"]["login"] = MAINTAINER if label else AUTHOR
    pull = payload["pull_request"]
    pull.update(number=PR, state="open", draft=False, labels=[{"name": n} for n in labels])
    pull["head"].update(sha=git(origin, "rev-parse", branch), ref="feature")
    pull["head"]["repo"]["full_name"] = "mallory/sglang" if fork else standin.state.repo
    pull["head"]["repo"]["owner"]["login"] = "mallory" if fork else owner
    pull["base"].update(sha=git(origin, "rev-parse", "main"), ref="main")
    if label:
        payload["label"] = {"name": label}
    return payload


def _workflow_run(standin, origin, name: str, run_id: str, fork: bool, *, branch="feature",
                  conclusion="success") -> dict:  # fmt: skip
    payload = hook("workflow_run.completed")
    owner, repo = standin.state.repo.split("/")
    payload["repository"].update(full_name=standin.state.repo, name=repo)
    head_repo = "mallory/sglang" if fork else standin.state.repo
    payload["workflow_run"].update(id=int(run_id), name=name, event="pull_request",
                                   conclusion=conclusion, head_branch="feature",
                                   head_sha=git(origin, "rev-parse", branch))  # fmt: skip
    payload["workflow_run"]["head_repository"].update(full_name=head_repo)
    payload["workflow_run"]["head_repository"]["owner"]["login"] = head_repo.split("/")[0]
    return payload


def explain(jobs: dict) -> str:
    """Every job's log, a called workflow's jobs included."""
    out = []
    for runs in jobs.values():
        for run in runs:
            out.append(f"=== {run.job}: {run.result}\n{run.log()}")
            out += [explain(run.called)] if run.called else []
    return "\n".join(out)


def _rows(jobs: dict, suite: str) -> list:
    [call] = jobs[suite]
    return [] if call.called is None else call.called["run"]


def _comments(standin, kind: str):
    return [c for c in standin.comments(PR) if f"<!-- ci-budget:{kind} -->" in c.body]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("origin", "fork"),
    [("run-test-step.yml", True), ("run-test-step.yml", False), ("run-test-read-step.yml", False)],
    ids=["drop-in-fork", "drop-in-same-repository", "run_suite-read-same-repository"],
    indirect=["origin"],
)
def test_run_ci_label_runs_sglangs_shards_once_and_posts_one_run_report(
    tmp_path, origin, github_standin, runner_temp, project, fork, request
):
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", user=AUTHOR,
                            head_repo="mallory/sglang" if fork else None)  # fmt: skip
    github_standin.state.roles[MAINTAINER] = "write"
    gh = Repo(tmp_path, origin, github_standin, runner_temp, project)

    # The maintainer adds run-ci: pr-test.yml does not listen for labels; ci-budget's own
    # workflow does, and its gating label is ci-budget-run, so it plans nothing.
    github_standin.state.issues[PR].labels.append("run-ci")
    labelled = _pull_event(github_standin, origin, "labeled", fork=fork, label="run-ci")
    started = gh.deliver("pull_request", labelled, sha=head) | gh.deliver(
        "pull_request_target", labelled
    )
    assert set(started) == {"ci-budget.yml"}, started
    plan = started["ci-budget.yml"]["plan"][0]
    assert plan.outputs["should-run"] == "false", explain(started["ci-budget.yml"])
    assert started["ci-budget.yml"]["run"][0].result == "skipped"

    # The next PR run (a push, or a re-run of the run the gate stopped): sglang's shards.
    token = READONLY_TOKEN if fork else INSTALLATION_TOKEN
    pushed = _pull_event(github_standin, origin, "synchronize", fork=fork)
    started = gh.deliver("pull_request", pushed, token=token, sha=head, only="pr-test.yml")
    jobs = started["pr-test.yml"]
    assert jobs["call-gate"][0].result == "success", explain(jobs)
    for suite in sglang_ci.SUITES:
        rows = _rows(jobs, suite)
        assert [r.matrix for r in rows] == [{"partition": 0}], (suite, explain(jobs))
        assert rows[0].result == "success", rows[0].log()
        assert rows[0].head == head
        log = rows[0].log()
        assert "installed the package of " + head in log
        assert log.count("testing pkg from-the-pr") == 1  # the shard's file ran once
        assert "on PATH for the next steps" in log  # the recipe's `command: setup` step
        assert ("read 1 of 1 file(s)" in log) == ("read" in request.node.callspec.id)
    assert jobs["pr-test-finish"][0].result == "success", explain(jobs)
    [report] = jobs["ci-budget-report"]
    assert report.result == "success", report.log()
    assert _comments(github_standin, "run") == []  # a pull_request run posts nothing
    artifact = tmp_path / f"run-{gh.run_ids['pr-test.yml']}" / "artifacts" / "ci-budget-run"
    data = json.loads((artifact / "ci-budget-report.json").read_text())
    assert data["kind"] == "run"

    # The run ends: every file kept its budget, so the poster creates no comment (comment
    # policy `changes`)...
    done = _workflow_run(github_standin, origin, "PR Test Base", gh.run_ids["pr-test.yml"], fork)
    started = gh.deliver("workflow_run", done)
    assert set(started) == {"ci-budget-post.yml"}
    assert started["ci-budget-post.yml"]["post"][0].result == "success", explain(
        started["ci-budget-post.yml"]
    )
    assert _comments(github_standin, "run") == []
    assert "no run comment on " in explain(started["ci-budget-post.yml"])
    # ... and updates the one an earlier push's run left, once.
    github_standin.add_comment(PR, BOT_LOGIN, "<!-- ci-budget:run -->\nan earlier push's report")
    started = gh.deliver("workflow_run", done)
    [comment] = _comments(github_standin, "run")
    assert comment.login == BOT_LOGIN and sglang_ci.test_path(WATCHED) in comment.body
    assert github_standin.state.dispatches == []  # no second GPU run anywhere
    assert github_standin.invalid == []


@pytest.mark.slow
@pytest.mark.parametrize("fork", [True, False], ids=["fork", "same-repository"])
def test_rerun_test_gets_sglangs_one_reply_and_one_gpu_run(
    tmp_path, origin, github_standin, runner_temp, project, fork
):
    head = git(origin, "rev-parse", "feature")
    if fork:
        git(origin, "update-ref", f"refs/pull/{PR}/head", head)
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", user=AUTHOR,
                            head_repo="mallory/sglang" if fork else None)  # fmt: skip
    github_standin.state.roles[MAINTAINER] = "write"
    gh = Repo(tmp_path, origin, github_standin, runner_temp, project)
    spec = sglang_ci.test_path(WATCHED).removeprefix("test/")
    body = f"/rerun-test {spec}"
    cid = github_standin.add_comment(PR, MAINTAINER, body)
    payload = hook("issue_comment.created.on-pull-request")
    payload["repository"].update(full_name=github_standin.state.repo)
    payload["repository"]["owner"]["login"] = github_standin.state.repo.split("/")[0]
    payload["issue"]["number"] = PR
    payload["comment"].update(id=cid, body=body)
    payload["comment"]["user"]["login"] = payload["sender"]["login"] = MAINTAINER

    started = gh.deliver("issue_comment", payload)
    # sglang's handler answers; ci-budget's plan does not start for /rerun-test
    assert set(started) == {"slash-command-handler.yml", "ci-budget.yml"}
    assert started["ci-budget.yml"]["plan"][0].result == "skipped"
    handler = started["slash-command-handler.yml"]["slash_command"][0]
    assert handler.result == "success", handler.log()
    [dispatch] = github_standin.state.dispatches
    assert dispatch["path"].endswith("/actions/workflows/rerun-test.yml/dispatches")
    inputs = dispatch["inputs"]
    assert inputs["install_script"] == sglang_ci.INSTALL and inputs["runs_on"] == "1-gpu-h100"
    assert inputs.get("pr_head_sha", "") == (head if fork else "")

    event = {"inputs": inputs, "ref": dispatch["ref"], "sender": {"login": MAINTAINER},
             "repository": payload["repository"]}  # fmt: skip
    sha = head if not fork else git(origin, "rev-parse", "main")
    started = gh.deliver("workflow_dispatch", event, sha=sha, only="rerun-test.yml")
    jobs = started["rerun-test.yml"]
    [gpu] = jobs["rerun-test-cuda"]
    assert gpu.result == "success" and gpu.head == head, gpu.log()
    assert gpu.runs_on == "1-gpu-h100"
    assert gpu.log().count("testing pkg from-the-pr") == 1  # the file ran once, the PR's code
    assert jobs["write-back-result"][0].result == "success", explain(jobs)
    replies = [c for c in github_standin.comments(PR) if c.id != cid]
    [reply] = replies  # one reply in all, sglang's, marked passed
    assert reply.body.startswith(f"Results for `{body}`") and "\u2705" in reply.body
    assert [r[1] for r in github_standin.state.comments[cid].reactions] == ["+1"]
    assert len(github_standin.state.dispatches) == 1
    assert github_standin.invalid == []
    assert "ci-budget" not in reply.body


def test_the_fixture_is_sglangs_files_unchanged():
    import subprocess

    table = (sglang_ci.FIXTURE.parent / "SOURCES.md").read_text()
    for name in sglang_ci.WORKFLOWS:
        blob = subprocess.run(["git", "hash-object", str(sglang_ci.FIXTURE / name)],
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        assert f"`workflows/{name}` | `.github/workflows/{name}` | `{blob}`" in table, name


@pytest.mark.slow
def test_ci_budget_run_command_installs_the_pr_and_reports_alone(
    tmp_path, origin, github_standin, runner_temp, project
):
    """Recipe 3: ci-budget's own command. sglang's handler does not answer it; ci-budget's run
    job installs the PR's code with the install script of the file's runner config (read from
    runner_configs.yml by plan), runs the file once and posts the run report."""
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", user=AUTHOR,
                            head_pushed_at="2025-12-31T00:00:00Z")  # fmt: skip
    github_standin.state.roles[MAINTAINER] = "write"
    gh = Repo(tmp_path, origin, github_standin, runner_temp, project)
    body = f"/ci-budget-run {sglang_ci.test_path(WATCHED)}"
    cid = github_standin.add_comment(PR, MAINTAINER, body)
    payload = hook("issue_comment.created.on-pull-request")
    payload["repository"].update(full_name=github_standin.state.repo)
    payload["repository"]["owner"]["login"] = github_standin.state.repo.split("/")[0]
    payload["issue"]["number"] = PR
    created = github_standin.state.comments[cid].created_at
    payload["comment"].update(id=cid, body=body, created_at=created, updated_at=created)
    payload["comment"]["user"]["login"] = payload["sender"]["login"] = MAINTAINER
    started = gh.deliver("issue_comment", payload)
    # sglang's handler starts for every comment and answers only its own commands
    assert started["slash-command-handler.yml"]["slash_command"][0].result == "skipped"
    jobs = started["ci-budget.yml"]
    plan = jobs["plan"][0]
    assert plan.outputs["should-run"] == "true", explain(jobs)
    [row] = json.loads(plan.outputs["matrix"])["include"]
    assert row["install"] == sglang_ci.INSTALL and row["runner_config"] == "1-gpu-large"
    [run] = jobs["run"]
    assert run.result == "success" and run.head == head, run.log()
    log = run.log()
    assert "installed the package of " + head in log
    assert jobs["report"][0].result == "success", explain(jobs)
    [comment] = _comments(github_standin, "run")
    assert sglang_ci.test_path(WATCHED) in comment.body
    assert github_standin.state.dispatches == []
    assert github_standin.invalid == []


def _branch(origin: Path, name: str, files: dict[str, str]) -> str:
    """A branch off main that changes `files` only; its head."""
    git(origin, "checkout", "-q", "-b", name, "main")
    for rel, text in files.items():
        sglang_ci.write(origin, rel, text)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", name)
    git(origin, "checkout", "-q", "main")
    return git(origin, "rev-parse", name)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["unlabelled", "no-package-change"])
def test_a_pr_run_where_no_stage_job_ran_is_green_and_creates_no_comment(
    tmp_path, origin, github_standin, runner_temp, project, case
):
    """No run-ci label: sglang's gate stops the run. A PR that changes no package: its
    check-changes skips every stage. Either way ci-budget's report job says nothing ran, exit 0,
    and the poster creates nothing; a comment an earlier push left is updated to say so."""
    branch, labels = "feature", ()
    if case == "no-package-change":
        branch, labels = "docs", ("run-ci",)
        _branch(origin, branch, {"docs/usage.md": "How to use it.\n"})
    head = git(origin, "rev-parse", branch)
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", user=AUTHOR)
    github_standin.state.issues[PR].labels.extend(labels)
    gh = Repo(tmp_path, origin, github_standin, runner_temp, project)
    pushed = _pull_event(github_standin, origin, "synchronize", fork=False, branch=branch,
                         labels=labels)  # fmt: skip
    # Level 3 beside it, on the same push: its plan runs nothing and says nothing.
    own = gh.deliver("pull_request_target", pushed)["ci-budget.yml"]
    assert own["plan"][0].result == "success", explain(own)
    assert own["plan"][0].outputs["should-run"] == "false"
    assert own["run"][0].result == own["report"][0].result == "skipped"
    jobs = gh.deliver("pull_request", pushed, sha=head, only="pr-test.yml")["pr-test.yml"]
    for suite in sglang_ci.SUITES:
        assert all(r.result == "skipped" for r in jobs[suite]), (suite, explain(jobs))
        assert all(r.result == "skipped" for r in _rows(jobs, suite)), (suite, explain(jobs))
    [report] = jobs["ci-budget-report"]
    assert report.result == "success", report.log()
    assert "nothing ran, no job left results" in report.summary
    artifact = tmp_path / f"run-{gh.run_ids['pr-test.yml']}" / "artifacts" / "ci-budget-run"
    assert json.loads((artifact / "ci-budget-report.json").read_text())["lines"] == []

    conclusion = "failure" if case == "unlabelled" else "success"  # the gate's red, not ours
    done = _workflow_run(github_standin, origin, "PR Test Base", gh.run_ids["pr-test.yml"],
                         False, branch=branch, conclusion=conclusion)  # fmt: skip
    [post] = gh.deliver("workflow_run", done)["ci-budget-post.yml"]["post"]
    assert post.result == "success", post.log()
    assert _comments(github_standin, "run") == []
    github_standin.add_comment(PR, BOT_LOGIN, "<!-- ci-budget:run -->\nan earlier push's report")
    [post] = gh.deliver("workflow_run", done)["ci-budget-post.yml"]["post"]
    assert post.result == "success", post.log()
    [comment] = _comments(github_standin, "run")
    assert "nothing ran" in comment.body and "earlier push" not in comment.body
    assert len(github_standin.comments(PR)) == 1  # nobody else said anything either
    assert github_standin.invalid == []


@pytest.mark.slow
def test_a_cancelled_run_and_a_run_that_left_no_report_post_nothing(
    tmp_path, origin, github_standin, runner_temp, project
):
    """pr-test.yml cancels the previous push's run: the poster does not start. A run that
    stopped before its report job left no artifact: the download fails, the job stays green,
    nothing is posted. The comment already there is left as it is."""
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", user=AUTHOR)
    earlier = "<!-- ci-budget:run -->\nan earlier push's report"
    github_standin.add_comment(PR, BOT_LOGIN, earlier)
    gh = Repo(tmp_path, origin, github_standin, runner_temp, project)
    cancelled = _workflow_run(github_standin, origin, "PR Test Base", "7999", False,
                              conclusion="cancelled")  # fmt: skip
    [post] = gh.deliver("workflow_run", cancelled)["ci-budget-post.yml"]["post"]
    assert post.result == "skipped"
    stopped = _workflow_run(github_standin, origin, "PR Test Base", "7999", False,
                            conclusion="failure")  # fmt: skip
    [post] = gh.deliver("workflow_run", stopped)["ci-budget-post.yml"]["post"]
    assert post.result == "success", post.log()
    assert [s.outcome for s in post.steps][-2:] == ["failure", "skipped"]  # download, report
    assert [c.body for c in _comments(github_standin, "run")] == [earlier]
    assert github_standin.invalid == []
