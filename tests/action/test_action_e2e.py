"""bitexact-budget.yml end to end: its jobs (plan -> run per matrix row -> report, and budget)
run through tests/actionrunner against the local GitHub stand-in, with this repository's
action.yml and the bundled examples/bitexact suite, copied into a git repository in tmp_path.

Stood in by the harness, and said so there: checkout (git clone + checkout), artifacts (copied
folders). Replaced by the test: the run job's `testenv` step, whose interpreter is this one (it
has pytest and numpy; the step itself would pip-install them from the network), and its
`sandbox-setup` step (sudo and apt on a hosted runner; this machine has bubblewrap or the run
scenarios skip, see helpers/sandbox.py).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from actionrunner import Runner, Unsupported, evaluate, render
from actionrunner.runner import read_output_file
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN
from gitrepo import git
from helpers.sandbox import sandbox_or_skip

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "tests" / "fixtures" / "github" / "webhooks"
WORKFLOW = Path(".github/workflows/bitexact-budget.yml")
SPEC = "test/registered/radix_cache/test_hybrid_cache_kl_bitexact.py"
PR = 7
COPIED = ["action.yml", "pyproject.toml", "README.md", "requirements", "scripts", "src", ".github"]


def copy_project(dest: Path, source: Path = ROOT) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*-artifacts", "ci-budget-results*")
    for name in [*COPIED, "examples/bitexact"]:
        src = source / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)


@pytest.fixture(scope="session")
def project(tmp_path_factory):
    """One snapshot of the project per session: every scenario runs the same code."""
    snapshot = tmp_path_factory.mktemp("project")
    copy_project(snapshot)
    return snapshot


@pytest.fixture(scope="session")
def runner_temp(tmp_path_factory, project):
    """RUNNER_TEMP shared by every job of the session, like a runner that keeps its temp: the
    action's locked wheels are downloaded here once (the real setup script) and every job
    unpacks them again after checking them against the lock."""
    temp = tmp_path_factory.mktemp("runner-temp")
    output = temp / "setup-output"
    env = {**os.environ, "ACTION_PATH": str(project), "RUNNER_TEMP": str(temp)}
    env["GITHUB_OUTPUT"] = str(output)
    for command in ("run", "report"):  # the lean lock for GPU jobs, the full one for the rest
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
            + [str(project / "scripts/action_setup.sh")],
            env={**env, "INPUT_COMMAND": command},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    written = read_output_file(output)
    assert subprocess.run(
        [written["cli"], "--version"], capture_output=True, text=True
    ).stdout.startswith("ci-budget ")
    # The second set-up found the first one's wheels in the tool cache only for its own lock.
    assert written["installer"] == "pip" and Path(written["site"], "github").is_dir()
    return temp


@pytest.fixture
def origin(tmp_path, project):
    """The repository on 'GitHub': main with the project, a PR branch `feature` one commit on."""
    repo = tmp_path / "origin"
    repo.mkdir()
    copy_project(repo, project)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    note = repo / "examples" / "bitexact" / "NOTES.txt"
    note.write_text("a change under review\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    git(repo, "checkout", "-q", "main")
    return repo


def push(repo: Path, text: str) -> str:
    """A new commit on the PR branch; returns its sha."""
    git(repo, "checkout", "-q", "feature")
    (repo / "examples" / "bitexact" / "NOTES.txt").write_text(text)
    git(repo, "commit", "-q", "-am", text)
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return sha


def hook(name: str) -> dict:
    return json.loads((HOOKS / f"{name}.payload.json").read_text(encoding="utf-8"))


def _repo_fields(payload: dict, standin) -> None:
    owner, name = standin.state.repo.split("/")
    payload["repository"].update(full_name=standin.state.repo, name=name)
    payload["repository"]["owner"]["login"] = owner


def comment_event(standin, login: str, body: str) -> tuple[dict, int]:
    cid = standin.add_comment(PR, login, body)
    payload = hook("issue_comment.created.on-pull-request")
    _repo_fields(payload, standin)
    payload["issue"]["number"] = PR
    created = standin.state.comments[cid].created_at  # GitHub's time of the comment
    payload["comment"].update(id=cid, body=body, created_at=created, updated_at=created)
    payload["comment"]["user"]["login"] = login
    payload["sender"]["login"] = login
    return payload, cid


def pull_event(
    standin, action: str, origin: Path, labels: list[str], label: str | None = None, fork=False
):
    payload = hook(f"pull_request.{'labeled' if action == 'labeled' else 'synchronize'}")
    _repo_fields(payload, standin)
    payload["action"] = action
    payload["number"] = PR
    pull = payload["pull_request"]
    pull.update(number=PR, draft=False, state="open")
    pull["labels"] = [{"name": n} for n in labels]
    pull["head"].update(sha=git(origin, "rev-parse", "feature"), ref="feature")
    pull["head"]["repo"]["full_name"] = "mallory/hello-gpu" if fork else standin.state.repo
    pull["base"].update(sha=git(origin, "rev-parse", "main"), ref="main")
    pull["base"]["repo"]["full_name"] = standin.state.repo
    if label:
        payload["label"] = {"name": label}
        # A label counts only from someone allowed to start runs: a maintainer applies it.
        payload["sender"]["login"] = "maintainer"
        standin.state.roles.setdefault("maintainer", "write")
    return payload


def run_workflow(tmp_path, origin, standin, runner_temp, event_name, payload, workflow=WORKFLOW,
                 **kw):  # fmt: skip
    work = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    sha = payload["pull_request"]["head"]["sha"] if event_name == "pull_request" else None
    github = {
        "event_name": event_name,
        "event": payload,
        "repository": standin.state.repo,
        "repository_owner": standin.state.repo.split("/")[0],
        "token": INSTALLATION_TOKEN,
        "sha": sha or git(origin, "rev-parse", "main"),
        "ref": f"refs/pull/{PR}/merge" if sha else "refs/heads/main",
        "api_url": standin.url,
        "server_url": "https://github.example",
        "run_id": "4242",
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update(
        CI="true",
        GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME=event_name,
        GITHUB_REPOSITORY=standin.state.repo,
        GITHUB_API_URL=standin.url,
        GITHUB_SERVER_URL="https://github.example",
        GITHUB_SHA=github["sha"],
        GITHUB_REF=github["ref"],
        GITHUB_RUN_ID="4242",
        RUNNER_TEMP=str(runner_temp),
    )
    runner = Runner(
        origin,
        work,
        runner_temp=runner_temp,
        github=github,
        env=env,
        replace={"testenv": {"python": sys.executable}, "sandbox-setup": {}},
        **kw,
    )
    runner.env["GITHUB_EVENT_PATH"] = str(runner.event_path)
    return runner.run_workflow(origin / workflow)


def sticky(standin, kind: str):
    return [
        c
        for c in standin.comments(PR)
        if f"<!-- ci-budget:{kind} -->" in c.body and c.login == BOT_LOGIN
    ]


def reactions(standin, cid: int) -> list[list[str]]:
    return standin.state.comments[cid].reactions


def explain(jobs) -> str:
    return "\n".join(run.log() for runs in jobs.values() for run in runs)


# --- the harness itself ----------------------------------------------------------------------


def test_expressions_follow_github_rules_and_refuse_the_unknown():
    ctx = {"needs": {"plan": {"outputs": {"should-run": "true", "matrix": '{"include": [1]}'}}}}
    ok = {"success": True, "failure": False, "always": True, "cancelled": False}
    assert evaluate("needs.plan.outputs.should-run == 'TRUE'", ctx) is True  # case-insensitive
    assert render("${{ fromJSON(needs.plan.outputs.matrix) }}", ctx) == {"include": [1]}
    assert render("a-${{ needs.plan.outputs.nothing || 'x' }}", ctx) == "a-x"
    assert evaluate("always() && needs.plan.outputs.should-run == 'true'", ctx, ok) is True
    with pytest.raises(Unsupported):
        evaluate("hashFiles('**/x')", ctx)
    with pytest.raises(Unsupported):
        evaluate("secrets.TOKEN", ctx)
    # && and || short-circuit: fromJSON of an unset variable is never called.
    runs_on = "${{ vars.X && fromJSON(vars.X) || 'ubuntu-latest' }}"
    assert render(runs_on, {"vars": {}}) == "ubuntu-latest"
    assert render(runs_on, {"vars": {"X": '["self-hosted", "1-gpu-large"]'}}) == [
        "self-hosted",
        "1-gpu-large",
    ]


# --- scenarios -------------------------------------------------------------------------------


# The default run keeps two scenarios, a run a writer asked for and a reader refused; the
# others are `slow` (python -m pytest -m slow).
def test_rerun_test_by_writer_runs_the_authorised_commit(
    tmp_path, origin, github_standin, runner_temp
):
    sandbox_or_skip()  # the run job's tests run in the sandbox
    head = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", user="contributor")
    github_standin.state.roles["alice"] = "write"
    payload, cid = comment_event(github_standin, "alice", f"/rerun-test {SPEC}")
    moved = {}

    def after(job, run):  # the branch moves after the comment: the GPU job must not follow it
        if job == "plan":
            moved["sha"] = push(origin, "pushed after the comment")

    jobs = run_workflow(
        tmp_path, origin, github_standin, runner_temp, "issue_comment", payload, between_jobs=after
    )
    plan, runs, report = jobs["plan"][0], jobs["run"], jobs["report"][0]
    assert plan.outputs["should-run"] == "true", explain(jobs)
    assert plan.outputs["head-sha"] == head
    assert [r.result for r in runs] == ["success"], explain(jobs)
    assert runs[0].head == head != moved["sha"]
    assert runs[0].runs_on == "ubuntu-latest"  # no BITEXACT_RUNS_ON variable
    assert runs[0].concurrency["group"].startswith(f"bitexact-run-{PR}-")
    step = next(s for s in runs[0].steps if s.id == "run")
    assert "from the wheels cached in" in step.log  # the session's wheels, checked and unpacked
    assert report.result == "success", explain(jobs)
    assert jobs["budget"][0].result == "skipped"
    [comment] = sticky(github_standin, "run")
    assert "TestHybridCacheKL" in comment.body  # per-class timing against the file's budget
    assert "test_hybrid_cache_kl_bitexact.py" in comment.body
    assert [BOT_LOGIN, "eyes"] in reactions(github_standin, cid)
    assert "ci-budget" in report.summary


def test_rerun_test_by_reader_is_refused_before_any_runner(
    tmp_path, origin, github_standin, runner_temp
):
    github_standin.add_pull(PR, head_sha=git(origin, "rev-parse", "feature"), head_ref="feature")
    github_standin.state.roles["mallory"] = "read"
    payload, cid = comment_event(github_standin, "mallory", f"/rerun-test {SPEC}")
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "issue_comment", payload)
    assert jobs["plan"][0].outputs["should-run"] == "false", explain(jobs)
    assert [r.result for r in jobs["run"]] == ["skipped"]
    assert jobs["report"][0].result == "skipped"
    assert not any((tmp_path).glob("run-*/artifacts/*"))  # nothing ran, nothing uploaded
    assert [BOT_LOGIN, "confused"] in reactions(github_standin, cid)
    assert sticky(github_standin, "run") == []
    replies = [c.body for c in github_standin.comments(PR) if c.login == BOT_LOGIN]
    assert any("@mallory" in body and "refused" in body for body in replies)


SETUP_ONLY = """\
name: setup only
on: push
permissions: {}
jobs:
  setup:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with: { persist-credentials: false }
      - uses: ./
        with: { command: setup }
      - run: ci-budget --version && command -v ci-budget
  bad:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with: { persist-credentials: false }
      - uses: ./
        with: { command: report, post: "true", comment-mode: sometimes }
"""


def test_setup_puts_ci_budget_on_path_and_a_bad_comment_mode_is_one_line(
    tmp_path, origin, github_standin, runner_temp
):
    from ci_budget import __version__

    workflow = Path(".github/workflows/setup-only.yml")
    (origin / workflow).write_text(SETUP_ONLY, encoding="utf-8")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "setup only")
    pushed = {"ref": "refs/heads/main", "after": git(origin, "rev-parse", "main")}
    pushed["repository"] = {"owner": {}}
    _repo_fields(pushed, github_standin)
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "push", pushed,
                        workflow=workflow)  # fmt: skip
    [setup] = jobs["setup"]
    assert setup.result == "success", explain(jobs)
    *_, name, version, where = setup.steps[-1].log.split()  # --version, then command -v
    assert (name, version) == ("ci-budget", __version__) and where.endswith("/bin/ci-budget")
    assert Path(where).parent.parent.parent == runner_temp  # the job's own folder in RUNNER_TEMP
    [bad] = jobs["bad"]
    assert bad.result == "failure"
    assert (
        "::error title=ci-budget::input 'comment-mode' must be always, changes or off, not "
        "'sometimes'" in bad.log()
    )


@pytest.mark.slow
def test_run_ci_label_then_push_updates_one_merged_comment(
    tmp_path, origin, github_standin, runner_temp
):
    sandbox_or_skip()  # the run job's tests run in the sandbox
    github_standin.add_pull(
        PR, head_sha=git(origin, "rev-parse", "feature"), head_ref="feature", labels=["run-ci"]
    )
    labeled = pull_event(github_standin, "labeled", origin, ["run-ci"], label="run-ci")
    jobs = run_workflow(
        tmp_path, origin, github_standin, runner_temp, "pull_request_target", labeled
    )
    rows = jobs["run"]
    assert jobs["plan"][0].outputs["should-run"] == "true", explain(jobs)
    assert rows and all(r.result == "success" for r in rows), explain(jobs)
    shards = sorted(p.name for p in (tmp_path / "run-0" / "artifacts").glob("ci-budget-results-*"))
    assert shards == [f"ci-budget-results-{i}" for i in range(len(rows))]
    assert jobs["report"][0].result == "success", explain(jobs)
    [first] = sticky(github_standin, "run")
    for row in rows:  # one comment holds every shard's files
        for spec in row.matrix.get("specs") or []:
            assert spec.split("::")[0].rsplit("/", 1)[-1] in first.body
    assert "test_long_prefix_sweep.py" in first.body
    assert "test_hybrid_cache_kl_bitexact.py" in first.body
    assert jobs["budget"][0].result == "skipped"  # the static report runs on pull_request
    first_body, first_updated = first.body, first.updated_at

    new_head = push(origin, "second push")
    github_standin.state.issues[PR].head_sha = new_head
    sync = pull_event(github_standin, "synchronize", copy.deepcopy(origin), ["run-ci"])
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "pull_request_target", sync)
    assert all(r.head == new_head for r in jobs["run"]), explain(jobs)
    assert jobs["report"][0].result == "success", explain(jobs)
    [again] = sticky(github_standin, "run")  # updated in place, not a second comment
    assert again.id == first.id
    assert again.updated_at != first_updated or again.body != first_body


# --- approval bound to a commit ---------------------------------------------------------------


def approval_notices(standin):
    return sticky(standin, "approval")


@pytest.mark.slow
def test_fork_pr_labelled_then_pushed_to_runs_only_the_approved_commit(
    tmp_path, origin, github_standin, runner_temp
):
    sandbox_or_skip()  # the run job's tests run in the sandbox
    approved = git(origin, "rev-parse", "feature")
    github_standin.add_pull(
        PR, head_sha=approved, head_ref="feature", head_repo="mallory/hello-gpu", labels=["run-ci"]
    )
    # On pull_request the fork's own workflow would run: nothing of the GPU path starts there.
    opened = pull_event(github_standin, "synchronize", origin, ["run-ci"], fork=True)
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "pull_request", opened)
    assert jobs["plan"][0].result == "skipped" and [r.result for r in jobs["run"]] == ["skipped"]
    assert jobs["budget"][0].result == "success", explain(jobs)

    labeled = pull_event(github_standin, "labeled", origin, ["run-ci"], "run-ci", fork=True)
    jobs = run_workflow(
        tmp_path, origin, github_standin, runner_temp, "pull_request_target", labeled
    )
    assert jobs["plan"][0].outputs["should-run"] == "true", explain(jobs)
    assert {r.head for r in jobs["run"]} == {approved}
    assert jobs["report"][0].result == "success" and len(sticky(github_standin, "run")) == 1

    for n in range(2):  # two pushes after the approval: no GPU job, one notice
        head = push(origin, f"pushed after the label {n}")
        github_standin.state.issues[PR].head_sha = head
        sync = pull_event(github_standin, "synchronize", origin, ["run-ci"], fork=True)
        jobs = run_workflow(
            tmp_path, origin, github_standin, runner_temp, "pull_request_target", sync
        )
        assert jobs["plan"][0].outputs["should-run"] == "false", explain(jobs)
        assert [r.result for r in jobs["run"]] == ["skipped"]
        assert jobs["report"][0].result == "skipped"
        [notice] = approval_notices(github_standin)
        assert f"`{head}` is new on this pull request from a fork" in notice.body
    assert "run-ci" not in github_standin.state.issues[PR].labels  # re-applying it approves
    assert github_standin.invalid == []


@pytest.mark.slow
def test_rerun_test_then_force_push_before_plan_is_refused_and_at_sha_runs_that_commit(
    tmp_path, origin, github_standin, runner_temp
):
    sandbox_or_skip()  # the run job's tests run in the sandbox
    reviewed = git(origin, "rev-parse", "feature")
    github_standin.add_pull(PR, head_sha=reviewed, head_ref="feature", commits=[reviewed])
    github_standin.state.roles["alice"] = "write"
    payload, _ = comment_event(github_standin, "alice", f"/rerun-test {SPEC}")
    # The author force-pushes between the comment and plan reading the PR.
    unreviewed = push(origin, "force-pushed after the comment")
    pull = github_standin.state.issues[PR]
    pull.head_sha, pull.commits = unreviewed, [unreviewed]
    pull.head_pushed_at = github_standin.state.now()
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "issue_comment", payload)
    assert jobs["plan"][0].outputs["should-run"] == "false", explain(jobs)
    assert [r.result for r in jobs["run"]] == ["skipped"]
    [reply] = [c.body for c in github_standin.comments(PR) if c.login == BOT_LOGIN]
    assert f"`{unreviewed}`, is not provably older than this comment" in reply
    assert f"/rerun-test@{unreviewed} {SPEC}" in reply  # the full SHA: a prefix binds nothing

    # The maintainer reviews that commit and names it; another push follows at once.
    payload, cid = comment_event(github_standin, "alice", f"/rerun-test@{unreviewed} {SPEC}")
    later = push(origin, "pushed after the @sha comment")
    pull.head_sha, pull.commits = later, [unreviewed, later]
    pull.head_pushed_at = github_standin.state.now()
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "issue_comment", payload)
    assert jobs["plan"][0].outputs["head-sha"] == unreviewed, explain(jobs)
    assert [r.head for r in jobs["run"]] == [unreviewed] and jobs["run"][0].result == "success"
    replies = [c.body for c in github_standin.comments(PR) if c.login == BOT_LOGIN]
    assert any(f"rerunning at `{unreviewed}`" in body for body in replies)
    assert [BOT_LOGIN, "eyes"] in reactions(github_standin, cid)
    assert github_standin.invalid == []


GUARD_FIX = "examples/bitexact/fixes/34184.patch"


@pytest.mark.slow
def test_verify_guard_runs_the_file_with_its_fix_reverted_and_suggests_the_filled_table(
    tmp_path, origin, github_standin, runner_temp
):
    sandbox_or_skip()  # the run job's tests run in the sandbox
    head = git(origin, "rev-parse", "feature")
    path = f"examples/bitexact/{SPEC}"
    github_standin.add_pull(
        PR, head_sha=head, head_ref="feature", files=[path], hunks={path: [(1, 400)]}
    )
    github_standin.state.contents[(head, path)] = git(origin, "show", f"{head}:{path}") + "\n"
    github_standin.state.roles["alice"] = "write"
    name = SPEC.rsplit("/", 1)[-1]
    payload, cid = comment_event(github_standin, "alice", f"/verify-guard {name} {GUARD_FIX}")
    # The hosted runner of the example has no GPU: the repository variable names the column.
    jobs = run_workflow(
        tmp_path, origin, github_standin, runner_temp, "issue_comment", payload,
        vars={"BITEXACT_GUARD_ARCH": "sm90"},
    )  # fmt: skip
    plan, [run], report = jobs["plan"][0], jobs["run"], jobs["report"][0]
    assert plan.outputs["trigger"] == "verify-guard" and plan.outputs["head-sha"] == head
    assert run.result == "success" and run.head == head, explain(jobs)
    assert f"reverted patch {GUARD_FIX}" in run.log(), explain(jobs)
    store = tmp_path / "run-0/artifacts/ci-budget-results-0"
    assert store.is_dir(), explain(jobs)
    stored = sorted(p.name for p in store.iterdir())
    assert stored == ["fixed.json", "reverted.json", "verification.json"]
    assert report.result == "success", explain(jobs)
    [review] = github_standin.state.review_comments  # one suggestion on the table's lines
    assert review["path"] == path and review["commit_id"] == head
    assert "```suggestion" in review["body"] and "fix reverted" in review["body"]
    assert sticky(github_standin, "run") == []  # the answer is the suggestion, not a report
    assert [BOT_LOGIN, "eyes"] in reactions(github_standin, cid)
    assert github_standin.invalid == []


HOSTILE = """\
import unittest


def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time=5, stage="base-b", runner_config="1-gpu-large")


class TestHostile(unittest.TestCase):
    def test_message(self):
        raise AssertionError(
            "@octo-org/maintainers see [docs](https://evil.example) <img src=x onerror=alert(1)>"
            " <details open>``` #1 <!-- ci-budget:run -->"
        )


if __name__ == "__main__":
    unittest.main()
"""


@pytest.mark.slow
def test_hostile_test_output_reaches_the_comment_as_text(
    tmp_path, origin, github_standin, runner_temp
):
    sandbox_or_skip()  # the run job's tests run in the sandbox
    # An approved commit's test fails with markup in its message: the report job, which holds
    # the write token, posts it as inert text. The file exists only at the PR's commit, so this
    # also shows the registry being read there, as data.
    from tests.render.test_untrusted import assert_inert

    git(origin, "checkout", "-q", "feature")
    rel = "examples/bitexact/test/registered/serving/test_hostile_output.py"
    (origin / rel).parent.mkdir(parents=True, exist_ok=True)
    (origin / rel).write_text(HOSTILE)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "hostile")
    head = git(origin, "rev-parse", "HEAD")
    git(origin, "checkout", "-q", "main")
    github_standin.add_pull(PR, head_sha=head, head_ref="feature", head_repo="mallory/hello-gpu")
    github_standin.state.roles["alice"] = "write"
    spec = "test/registered/serving/test_hostile_output.py"
    payload, _ = comment_event(github_standin, "alice", f"/rerun-test {spec}")
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "issue_comment", payload)
    assert jobs["plan"][0].outputs["should-run"] == "true", explain(jobs)
    assert [r.result for r in jobs["run"]] == ["failure"]  # the test fails, as written
    [comment] = sticky(github_standin, "run")
    assert "test_hostile_output.py" in comment.body
    assert_inert(comment.body, "<!-- ci-budget:run -->", own_fences=comment.body.count("```text"))
    assert "@octo-org/maintainers" not in comment.body and "](https://evil" not in comment.body


PLAN_AND_DIFF = """\
name: plan and diff
on: push
permissions: {}
jobs:
  static:
    runs-on: ubuntu-latest
    permissions: { contents: read }
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with: { persist-credentials: false }
      - id: plan
        uses: ./
        with:
          command: plan
          root: examples/bitexact
          suite: base-b-test-1-gpu-large
      - uses: ./
        with:
          command: diff
          root: examples/bitexact
          base: ${{ github.sha }}
"""


def test_the_action_plans_the_suite_input_and_diffs_against_base(
    tmp_path, origin, github_standin, runner_temp
):
    workflow = Path(".github/workflows/plan-and-diff.yml")
    (origin / workflow).write_text(PLAN_AND_DIFF, encoding="utf-8")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "a workflow that plans one suite and diffs")
    pushed = {"ref": "refs/heads/main", "after": git(origin, "rev-parse", "main")}
    pushed["repository"] = {"owner": {}}
    _repo_fields(pushed, github_standin)
    jobs = run_workflow(tmp_path, origin, github_standin, runner_temp, "push", pushed,
                        workflow=workflow)  # fmt: skip
    [job] = jobs["static"]
    assert job.result == "success", explain(jobs)
    matrix = json.loads(job.steps[1].outputs["matrix"])["include"]
    assert {row["suite"] for row in matrix} == {"base-b-test-1-gpu-large"}
    assert "ci-budget: the report is in ci-budget-report.md and in the step summary" in job.log()
    # the static report of the commit against itself: its heading for no changes
    assert "No registration changes against" in job.summary
