"""The action harness's reusable workflows, matrices and stand-ins for published actions, each
on a small workflow written here (tests/actionrunner)."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from actionrunner import Runner, Unsupported
from actionrunner.standins import matrix_rows, typed_inputs
from ghstandin import INSTALLATION_TOKEN
from gitrepo import git

CALLER = """\
on: pull_request
env:
  FROM_WORKFLOW: ${{ github.event_name }}
jobs:
  setup:
    runs-on: ubuntu-latest
    outputs:
      shards: ${{ steps.s.outputs.shards }}
    steps:
      - id: s
        run: |
          echo 'shards={"a": {"arr": [0, 1, 2]}}' >> "$GITHUB_OUTPUT"
  stage:
    needs: setup
    uses: ./.github/workflows/_stage.yml
    with:
      name: a
      shards: ${{ needs.setup.outputs.shards }}
      flag: ${{ needs.setup.result == 'success' }}
    secrets: inherit
  bare:
    needs: setup
    uses: ./.github/workflows/_stage.yml
    with: { name: b, shards: '{"b": {"arr": [7]}}' }
  after:
    needs: [stage, bare]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "stage=${{ needs.stage.result }} total=${{ needs.stage.outputs.total }} seen=$SEEN"
        env:
          SEEN: ${{ needs.bare.outputs.secret_seen }}
"""
STAGE = """\
on:
  workflow_call:
    inputs:
      name: { type: string, required: true }
      shards: { type: string, required: true }
      flag: { type: boolean, default: false }
      size: { type: number, default: 3 }
    outputs:
      total:
        value: ${{ jobs.run.outputs.last }}
      secret_seen:
        value: ${{ jobs.run.outputs.seen }}
env:
  IN_CI: true
  FLAG: ${{ inputs.flag && 'on' || 'off' }}
jobs:
  run:
    runs-on: ${{ inputs.name }}-runner
    strategy:
      fail-fast: false
      max-parallel: 1
      matrix:
        part: ${{ fromJson(inputs.shards)[inputs.name].arr }}
    outputs:
      last: ${{ steps.one.outputs.part }}
      seen: ${{ steps.one.outputs.seen }}
    steps:
      - id: one
        env:
          TOKEN: ${{ secrets.EXTRA }}
        run: |
          echo "part=${{ matrix.part }}" >> "$GITHUB_OUTPUT"
          echo "seen=${TOKEN:-none}" >> "$GITHUB_OUTPUT"
          echo "in_ci=$IN_CI flag=$FLAG size=${{ inputs.size }} wf=${FROM_WORKFLOW:-unset}"
      - id: flaky
        continue-on-error: true
        run: exit 3
      - uses: ./.github/actions/not-in-this-repo
      - run: |
          echo "flaky ${{ steps.flaky.outcome }}/${{ steps.flaky.conclusion }}"
"""


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "origin"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def _runner(tmp_path, repo, event_name="pull_request", event=None, **kw) -> Runner:
    github = {"event_name": event_name, "event": event or {}, "repository": "octo/repo",
              "token": INSTALLATION_TOKEN, "sha": git(repo, "rev-parse", "HEAD"),
              "ref": "refs/heads/main", "api_url": kw.pop("api_url", "http://127.0.0.1:9")}  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    temp = tmp_path / "temp"
    temp.mkdir(exist_ok=True)
    runner = Runner(repo, tmp_path / "work", runner_temp=temp, github=github, env=env,
                    expand_scripts=True, **kw)  # fmt: skip
    runner.env.update(GITHUB_EVENT_PATH=str(runner.event_path), GITHUB_EVENT_NAME=event_name,
                      GITHUB_REPOSITORY="octo/repo", GITHUB_API_URL=github["api_url"])  # fmt: skip
    return runner


def test_reusable_workflows_take_typed_inputs_secrets_and_a_matrix_from_a_job_output(tmp_path):
    repo = _repo(tmp_path, {".github/workflows/ci.yml": CALLER,
                            ".github/workflows/_stage.yml": STAGE})  # fmt: skip
    runner = _runner(tmp_path, repo, secrets={"EXTRA": "s3cret"},
                     replace={"./.github/actions/not-in-this-repo": {}})  # fmt: skip
    jobs = runner.run_workflow(repo / ".github/workflows/ci.yml")
    [stage] = jobs["stage"]
    assert stage.result == "success"
    rows = stage.called["run"]
    assert [r.matrix for r in rows] == [{"part": 0}, {"part": 1}, {"part": 2}]
    assert rows[0].runs_on == "a-runner"
    first = rows[0].steps[0].log
    # workflow env evaluated in the called workflow (bools as GitHub writes them); the caller's
    # workflow env does not cross the call; a number input keeps its default
    assert "in_ci=true flag=on size=3 wf=unset" in first
    assert stage.outputs == {"total": "2", "secret_seen": "s3cret"}  # secrets: inherit
    assert jobs["bare"][0].outputs["secret_seen"] == "none"  # no inherit: GITHUB_TOKEN only
    # continue-on-error: the step failed, the job did not; the replaced action did not run
    assert [s.outcome for s in rows[0].steps] == ["success", "failure", "replaced", "success"]
    assert "flaky failure/success" in rows[0].steps[3].log
    assert "stage=success total=2 seen=none" in jobs["after"][0].steps[0].log


def test_a_called_workflow_refuses_what_it_does_not_declare(tmp_path):
    repo = _repo(tmp_path, {".github/workflows/ci.yml": CALLER.replace("name: a\n", "nmae: a\n"),
                            ".github/workflows/_stage.yml": STAGE})  # fmt: skip
    with pytest.raises(Unsupported, match="no input.*nmae"):
        _runner(tmp_path, repo).run_workflow(repo / ".github/workflows/ci.yml")
    with pytest.raises(Unsupported, match="not a boolean"):
        typed_inputs({"x": {"type": "boolean"}}, {"x": "yes"}, "dispatch")
    # a dispatch's strings, as the declared types
    assert typed_inputs({"x": {"type": "boolean"}, "n": {"type": "number"}, "s": {}},
                        {"x": "false", "n": "20"}, "d") == {"x": False, "n": 20, "s": ""}  # fmt: skip


def test_matrix_expansion_follows_githubs_include_and_exclude_rules():
    matrix = {"os": ["a", "b"], "py": [1, 2], "exclude": [{"os": "b", "py": 1}],
              "include": [{"os": "a", "extra": "x"}, {"py": 2, "os": "b", "big": True},
                          {"os": "c", "py": 9}]}  # fmt: skip
    assert matrix_rows(matrix, "j") == [
        {"os": "a", "py": 1, "extra": "x"},
        {"os": "a", "py": 2, "extra": "x"},
        {"os": "b", "py": 2, "big": True},
        {"os": "c", "py": 9},  # changes an original value of every row: a row of its own
    ]
    assert matrix_rows({"include": [{"a": 1}]}, "j") == [{"a": 1}]
    assert matrix_rows({"p": []}, "j") == []  # the job fails, as on GitHub


SCRIPTED = """\
on: pull_request
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - id: pr
        uses: actions/github-script@v8
        with:
          github-token: ${{ secrets.GITHUB_TOKEN }}
          script: |
            const pr = await github.rest.pulls.get({
              owner: context.repo.owner, repo: context.repo.repo,
              pull_number: context.issue.number });
            core.setOutput("labels", JSON.stringify(pr.data.labels.map(l => l.name)));
            core.setOutput("draft", pr.data.draft);
            const perm = await github.rest.repos.getCollaboratorPermissionLevel({
              owner: context.repo.owner, repo: context.repo.repo, username: "alice" });
            return perm.data.permission;
      - if: contains(fromJson(steps.pr.outputs.labels), 'run-ci')
        run: |
          echo "labelled; draft=${{ steps.pr.outputs.draft }} alice=${{ steps.pr.outputs.result }}"
      - uses: actions/github-script@v8
        with:
          script: |
            await github.rest.actions.getWorkflowRun({ owner: "o", repo: "r", run_id: 1 });
"""


def test_github_script_runs_the_script_against_the_standin(tmp_path, github_standin):
    if shutil.which("node") is None:
        pytest.skip("needs node")
    github_standin.add_pull(5, head_sha="a" * 40, head_ref="feature", labels=["run-ci"])
    github_standin.state.roles["alice"] = "write"
    repo = _repo(tmp_path, {".github/workflows/ci.yml": SCRIPTED})
    event = {"pull_request": {"number": 5}, "number": 5}
    runner = _runner(tmp_path, repo, event=event, api_url=github_standin.url)
    runner.env["GITHUB_REPOSITORY"] = github_standin.state.repo
    [gate] = runner.run_workflow(repo / ".github/workflows/ci.yml")["gate"]
    first, second, third = gate.steps
    assert first.outputs == {"labels": '["run-ci"]', "draft": "false", "result": '"write"'}
    assert "labelled; draft=false alice=write" in second.log  # bash ate the JSON's quotes
    # An operation the stand-in's GitHub description lacks fails the step, saying which.
    assert third.outcome == "failure" and "actions/get-workflow-run" in third.log
    assert gate.result == "failure"


FILTERED = """\
on: pull_request
jobs:
  changes:
    runs-on: ubuntu-latest
    outputs:
      code: ${{ steps.filter.outputs.code }}
    steps:
      - uses: actions/checkout@v4
      - id: filter
        uses: dorny/paths-filter@v3
        with:
          filters: |
            code:
              - "python/pkg/!(gen|kernels)/**/!(*.md)"
              - ".github/workflows/ci.yml"
            docs:
              - "**/*.md"
            kernels:
              - "python/pkg/kernels/**"
"""


def test_paths_filter_matches_the_prs_changed_files(tmp_path):
    repo = _repo(tmp_path, {".github/workflows/ci.yml": FILTERED, "README.md": "x\n"})
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    for rel in ("python/pkg/core/a/b.py", "python/pkg/core/NOTES.md", "docs/.hidden/x.md"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD")
    event = {"pull_request": {"number": 1, "base": {"sha": base}, "head": {"sha": head}}}
    [job] = _runner(tmp_path, repo, event=event).run_workflow(repo / ".github/workflows/ci.yml")[
        "changes"
    ]
    outputs = job.steps[1].outputs
    assert (outputs["code"], outputs["code_count"]) == ("true", "1")  # b.py, not the .md
    assert (outputs["docs"], outputs["docs_count"]) == ("true", "2")  # dot folders too
    assert outputs["kernels"] == "false"
    assert json.loads(outputs["changes"]) == ["code", "docs"]
    assert job.outputs == {"code": "true"}


def test_setup_python_puts_the_harness_interpreter_first(tmp_path):
    flow = textwrap.dedent("""\
        on: push
        jobs:
          j:
            runs-on: x
            steps:
              - uses: actions/setup-python@v5
                with: { python-version: '3.10' }
              - run: python -c "import sys; print(sys.executable)"
        """)
    repo = _repo(tmp_path, {".github/workflows/ci.yml": flow})
    [job] = _runner(tmp_path, repo, "push").run_workflow(repo / ".github/workflows/ci.yml")["j"]
    import sys

    assert os.path.dirname(sys.executable) in job.steps[1].log


def test_object_filters_map_a_property_over_a_list():
    from actionrunner import evaluate

    ctx = {"github": {"event": {"pull_request": {"labels": [{"name": "run-ci"}, {"x": 1}]}}}}
    assert evaluate("github.event.pull_request.labels.*.name", ctx) == ["run-ci"]
    assert evaluate("contains(github.event.pull_request.labels.*.name, 'RUN-CI')", ctx) is True
    assert evaluate("contains(github.event.pull_request.labels.*.name, 'run')", ctx) is False
    assert evaluate("github.x > 0", {"github": {"x": "120"}}) is True  # numbers from strings
    assert evaluate("github.x >= 2 || github.x < 'a'", {"github": {"x": 1}}) is False
    assert evaluate("github.missing == ''", {"github": {}}) is True  # null and '' are both 0
    assert evaluate("github.missing != ''", {"github": {}}) is False


def test_a_step_without_a_shell_runs_as_bash_e_and_a_bash_step_with_pipefail(tmp_path):
    flow = textwrap.dedent("""\
        on: push
        jobs:
          j:
            runs-on: x
            steps:
              - run: false | cat
              - shell: bash
                run: false | cat
        """)
    repo = _repo(tmp_path, {".github/workflows/ci.yml": flow})
    [job] = _runner(tmp_path, repo, "push").run_workflow(repo / ".github/workflows/ci.yml")["j"]
    assert [s.outcome for s in job.steps] == ["success", "failure"]
