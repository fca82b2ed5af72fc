"""Run action.yml's steps, and the jobs of a workflow, the way GitHub's runner does.

What is real: every `run:` is written to a file and run as GitHub runs it, `bash --noprofile
--norc -eo pipefail {0}` with `shell: bash` and `bash -e {0}` without a shell (its `${{ }}`
expanded first only with `expand_scripts`, see Runner);
GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY and GITHUB_EVENT_PATH are files;
`${{ }}` is evaluated only where GitHub evaluates it; `if:` follows GitHub's status rules; jobs
run in `needs` order with their matrix rows (vectors, include, exclude); a job that `uses:` a
reusable workflow of the repository runs its jobs with typed `inputs`, `secrets` (`inherit` or
given) and the workflow's `outputs`; workflow-level `env`; `continue-on-error` on steps.

What is a local equivalent, said here once: `actions/checkout` is a `git clone` of the origin
repository plus `git checkout <ref>` (the PR head commit where GitHub would use its merge
commit); `actions/upload-artifact` / `download-artifact` copy files to and from a folder per
artifact name (`run-id`: another run's folder, as the test hands it over); `OWNER/NAME@REF` of a
published action runs the local copy the test maps it to (`actions`), as GitHub would fetch it;
`actions/github-script`, `dorny/paths-filter` and `actions/setup-python` are done by the
harness (standins.py says how). Any other `uses:` raises `Unsupported`. Steps a test replaces
(`replace`, by step id or name or by the action a step uses) do not run: their outputs are given by the
test, and the step log says so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .expressions import (
    TEMPLATE,
    Strict,
    Unsupported,
    condition,
    evaluate,
    render,
    to_string,
    truthy,
)
from .local_actions import LocalActions
from .standins import github_script_step, matrix_rows, paths_filter, setup_python, typed_inputs

STEP_TIMEOUT = 600
# Keys the harness honours (timeout-minutes is accepted and not enforced); anything else, such
# as continue-on-error, would change the outcome, so it is refused rather than ignored.
STEP_KEYS = {"name", "id", "if", "run", "shell", "env", "working-directory", "uses", "with"}
STEP_KEYS |= {"timeout-minutes", "continue-on-error"}
JOB_KEYS = {"name", "needs", "if", "runs-on", "permissions", "concurrency", "strategy"}
JOB_KEYS |= {"outputs", "steps", "env", "timeout-minutes"}
CALL_KEYS = {"name", "needs", "if", "uses", "with", "secrets", "permissions", "concurrency"}
CALL_KEYS |= {"strategy"}
STRATEGY_KEYS = {"matrix", "fail-fast", "max-parallel"}  # runs are sequential: no throttle


def _check_keys(what: str, spec: dict, allowed: set[str]) -> None:
    unknown = set(spec) - allowed
    if unknown:
        raise Unsupported(f"{what}: keys {sorted(unknown)} are not supported by the harness")


@dataclass
class Step:
    name: str
    id: str | None
    outcome: str  # success / failure / skipped / replaced
    outputs: dict[str, str] = field(default_factory=dict)
    log: str = ""
    seconds: float = 0.0  # for reading a slow run's log, never asserted on


@dataclass
class ActionRun:
    outputs: dict[str, str]
    outcome: str
    steps: list[Step]


@dataclass
class JobRun:
    job: str
    result: str  # success / failure / skipped
    outputs: dict[str, str] = field(default_factory=dict)
    matrix: dict[str, Any] | None = None
    runs_on: Any = None
    concurrency: Any = None
    steps: list[Step] = field(default_factory=list)
    summary: str = ""
    head: str | None = None  # commit checked out
    called: dict[str, list[JobRun]] | None = None  # a reusable workflow's jobs, by name

    def log(self) -> str:
        return "\n".join(
            f"--- {s.name} [{s.outcome}, {s.seconds:.1f}s]\n{s.log}" for s in self.steps
        )


# The activity types an event starts a workflow for when its `on:` names none.
DEFAULT_TYPES = {"pull_request": {"opened", "synchronize", "reopened"},
                 "pull_request_target": {"opened", "synchronize", "reopened"}}  # fmt: skip


def listens(wf: dict, event_name: str, payload: dict) -> bool:
    """Whether GitHub starts this workflow for the event: its `on:` names the event, the
    activity type (`types`, or the event's defaults), and for workflow_run the workflow."""
    on = wf.get("on")
    on = {on: None} if isinstance(on, str) else dict.fromkeys(on) if isinstance(on, list) else on
    if not isinstance(on, dict) or event_name not in on:
        return False
    spec = on[event_name] or {}
    types = set(spec.get("types") or DEFAULT_TYPES.get(event_name, ()))
    if types and payload.get("action") not in types:
        return False
    if event_name == "workflow_run":
        return payload["workflow_run"]["name"] in (spec.get("workflows") or [])
    return True


def load_yaml(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:  # YAML 1.1 reads `on` as true
        data["on"] = data.pop(True)
    return data


def read_output_file(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV: `key=value` lines and `key<<DELIM` blocks."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        block = re.fullmatch(r"([^=<\s]+)<<(\S+)", line)
        if block:
            end = lines.index(block.group(2), i + 1)  # ValueError: unterminated, like the runner
            out[block.group(1)] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        elif line.strip():
            raise Unsupported(f"{path.name}: cannot read line {line!r}")
        i += 1
    return out


def _status(failed: bool, succeeded: bool | None = None) -> dict[str, bool]:
    """A step's status functions from whether an earlier step failed; a job's from its needs,
    where a skipped need is neither: success() is false and so is failure()."""
    ok = not failed if succeeded is None else succeeded
    return {"success": ok, "failure": failed, "always": True, "cancelled": False}


class Runner(LocalActions):
    """One simulated runner: an origin repository, an artifact store, a shared RUNNER_TEMP."""

    def __init__(
        self,
        origin: Path,
        work: Path,
        *,
        runner_temp: Path,
        github: dict[str, Any],
        env: dict[str, str],
        vars: dict[str, str] | None = None,
        replace: dict[str, dict[str, str]] | None = None,
        between_jobs: Callable[[str, JobRun], None] | None = None,
        actions: dict[str, Path] | None = None,
        run_artifacts: dict[str, Path] | None = None,
        repositories: dict[str, Path] | None = None,
        secrets: dict[str, str] | None = None,
        expand_scripts: bool = False,
    ):
        self.origin = origin
        self.work = work
        self.runner_temp = runner_temp
        self.github = github  # event_name, event, repository, token, sha, ref, api_url
        self.env = env
        self.vars = vars or {}
        self.replace = replace or {}  # step id -> outputs, for steps the test stands in for
        self.between_jobs = between_jobs
        self.artifacts = work / "artifacts"
        self.artifacts.mkdir(parents=True, exist_ok=True)
        self.actions = actions or {}  # "OWNER/NAME" -> the action's folder
        self.run_artifacts = run_artifacts or {}  # run id -> that run's artifact store
        # "OWNER/NAME" -> a local repository `actions/checkout` with `repository:` clones
        self.repositories = repositories or {}
        # secrets.GITHUB_TOKEN is the job's token, as on GitHub; others as the test gives them
        self.secrets = {"GITHUB_TOKEN": github["token"], **(secrets or {})}
        # GitHub expands `${{ }}` in a `run:` script before bash reads it. This project's own
        # workflows never put one there (zizmor's template-injection audit), so by default the
        # harness leaves them to bash, where they fail; another repository's files need it on.
        self.expand_scripts = expand_scripts
        self._rows: set[str] = set()  # job folders made so far
        self.event_path = work / "event.json"
        self.event_path.write_text(json.dumps(github["event"]), encoding="utf-8")

    # --- one bash step -------------------------------------------------------------------
    def _bash(
        self, script: str, env: dict[str, str], cwd: Path, files: Path, argv: list[str]
    ) -> tuple[int, str]:
        files.mkdir(parents=True, exist_ok=True)
        path = files / "script.sh"
        path.write_text(script, encoding="utf-8")
        done = subprocess.run(
            [*argv, str(path)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=STEP_TIMEOUT,
        )
        return done.returncode, done.stdout

    def _run_step(
        self, step: dict, ctx: dict, job: _JobState, where: Path, extra: dict | None = None
    ) -> Step:
        """One `run:` step; `extra` is environment already evaluated (a stand-in's inputs)."""
        name = step.get("name") or step.get("id") or step.get("run", "")[:40]
        _check_keys(f"step {name!r}", step, STEP_KEYS)
        env = {**self.env, **job.workflow_env, **job.env_file_values, **job.job_env}
        env.update({k: _text(render(v, ctx)) for k, v in step.get("env", {}).items()})
        env.update(extra or {})
        job.counter += 1
        files = job.temp / f"step-{job.counter}"
        files.mkdir(parents=True)
        outputs, summary = files / "output", files / "summary.md"
        env_file, path_file = files / "env", files / "path"
        for f in (outputs, summary, env_file, path_file):
            f.touch()
        env.update(
            GITHUB_OUTPUT=str(outputs),
            GITHUB_STEP_SUMMARY=str(summary),
            GITHUB_ENV=str(env_file),
            GITHUB_PATH=str(path_file),
        )
        if job.extra_path:
            env["PATH"] = os.pathsep.join([*job.extra_path, env.get("PATH", "")])
        cwd = where
        if step.get("working-directory") is not None:
            cwd = (where / str(render(step["working-directory"], ctx))).resolve()
        # GitHub's commands: `shell: bash` is strict (pipefail); no shell is `bash -e {0}`, so a
        # failure inside a pipe goes unnoticed there, as it does here.
        shell = step.get("shell")
        argv = (
            ["bash", "-e"]
            if shell is None
            else ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
        )
        if shell not in (None, "bash"):
            raise Unsupported(f"step {name!r}: shell {shell!r}")
        started = time.monotonic()
        script = step["run"]
        if self.expand_scripts and "${{" in script:
            script = TEMPLATE.sub(lambda m: to_string(evaluate(m.group(1), ctx)), script)
        rc, log = self._bash(script, env, cwd, files, argv)
        job.env_file_values.update(read_output_file(env_file))
        job.extra_path[:0] = [p for p in path_file.read_text().splitlines() if p.strip()]
        job.summary += summary.read_text(encoding="utf-8")
        result = Step(name, step.get("id"), "success" if rc == 0 else "failure", log=log)
        result.seconds = time.monotonic() - started
        result.outputs = read_output_file(outputs)
        return result

    # --- the composite action ----------------------------------------------------------------
    def run_action(self, action_dir: Path, given: dict[str, Any], job: _JobState) -> ActionRun:
        action = load_yaml(action_dir / "action.yml")
        if action.get("runs", {}).get("using") != "composite":
            raise Unsupported(f"{action_dir}: only composite actions are supported")
        declared = action.get("inputs", {})
        unknown = set(given) - set(declared)
        if unknown:
            raise Unsupported(f"{action_dir}/action.yml has no input(s) {sorted(unknown)}")
        github = {**self.github, "action_path": str(action_dir)}
        base = {"github": github, "runner": self._runner_ctx(job)}
        inputs = {}
        for key, spec in declared.items():
            if key in given:
                inputs[key] = _text(given[key])
            elif spec.get("required") and "default" not in spec:
                raise Unsupported(f"required input {key!r} not given")
            else:
                inputs[key] = _text(render(spec.get("default", ""), base))
        steps_ctx: dict[str, Any] = {}
        # GitHub warns about each given input its action.yml marks deprecated, before any step.
        warned = [
            f"##[warning]Input '{key}' has been deprecated with message: {spec['deprecationMessage']}"
            for key, spec in declared.items()
            if key in given and spec.get("deprecationMessage")
        ]
        ran = [Step("deprecated inputs", None, "success", log="\n".join(warned))] if warned else []
        failed = False
        for step in action["runs"]["steps"]:
            if "uses" in step:
                raise Unsupported(f"{action_dir}/action.yml: nested uses: {step['uses']}")
            ctx = {
                **base,
                "inputs": Strict("input", inputs),
                "steps": Strict("step id", steps_ctx),
                "env": {**job.workflow_env, **job.job_env, **job.env_file_values},
            }
            if not condition(step.get("if"), ctx, _status(failed)):
                result = Step(step.get("name", ""), step.get("id"), "skipped")
            else:
                result = self._run_step(step, ctx, job, job.workspace)
                failed = failed or result.outcome == "failure"
            ran.append(result)
            if result.id:
                steps_ctx[result.id] = {"outputs": result.outputs, "outcome": result.outcome}
        ctx = {**base, "inputs": Strict("input", inputs), "steps": Strict("step id", steps_ctx)}
        outputs = {
            k: _text(render(spec.get("value", ""), ctx))
            for k, spec in action.get("outputs", {}).items()
        }
        return ActionRun(outputs, "failure" if failed else "success", ran)

    def _runner_ctx(self, job: _JobState) -> dict[str, str]:
        return {"temp": str(self.runner_temp), "os": "Linux", "arch": "X64"}

    # --- jobs --------------------------------------------------------------------------------
    def run_workflow(
        self,
        path: Path,
        inputs: dict[str, Any] | None = None,
        secrets: dict[str, str] | None = None,
    ) -> dict[str, list[JobRun]]:
        """Every job of the workflow in `needs` order. `inputs`/`secrets`: a reusable workflow
        called by a job (run_workflow of its caller passes them)."""
        wf = load_yaml(path)
        state = _Workflow(path, self._event_inputs(wf) if inputs is None else inputs,
                          self.secrets if secrets is None else secrets)  # fmt: skip
        base = {"github": self.github, "inputs": state.inputs, "vars": self.vars}
        base["secrets"] = state.secrets
        state.env = {k: _text(render(v, base)) for k, v in (wf.get("env") or {}).items()}
        results: dict[str, list[JobRun]] = {}
        for name in _order(wf["jobs"]):
            spec = wf["jobs"][name]
            results[name] = self._run_job(name, spec, results, state)
            if self.between_jobs and inputs is None:
                for run in results[name]:
                    self.between_jobs(name, run)
        return results

    def _event_inputs(self, wf: dict) -> dict[str, Any]:
        """workflow_dispatch's `inputs` context: the event's strings as the declared types."""
        if self.github["event_name"] != "workflow_dispatch":
            return {}
        on = wf.get("on") if isinstance(wf.get("on"), dict) else {}
        declared = (on.get("workflow_dispatch") or {}).get("inputs") or {}
        given = self.github["event"].get("inputs") or {}
        return typed_inputs(declared, given, "workflow_dispatch")

    def _needs_ctx(self, spec: dict, results: dict[str, list[JobRun]]) -> tuple[dict, dict]:
        """(the `needs` context, the job's status functions)."""
        needs = spec.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        ctx = {need: _aggregate(results[need]) for need in needs}
        verdicts = {entry["result"] for entry in ctx.values()}
        return Strict("job in needs", ctx), _status("failure" in verdicts, verdicts <= {"success"})

    def _contexts(self, needs: dict, state: _Workflow) -> dict[str, Any]:
        return {"github": self.github, "needs": needs, "vars": self.vars,
                "inputs": state.inputs, "secrets": state.secrets}  # fmt: skip

    def _run_job(self, name: str, spec: dict, results: dict, state: _Workflow) -> list[JobRun]:
        if "uses" in spec:
            return [self._call(name, spec, results, state)]
        _check_keys(f"job {name!r}", spec, JOB_KEYS)
        for step in spec["steps"]:
            _check_keys(
                f"job {name!r} step {step.get('name', step.get('uses'))!r}", step, STEP_KEYS
            )
        needs, status = self._needs_ctx(spec, results)
        ctx = self._contexts(needs, state)
        if not condition(spec.get("if"), ctx, status):
            return [JobRun(name, "skipped")]
        rows: list[dict | None] = [None]
        if "strategy" in spec:
            _check_keys(f"job {name!r} strategy", spec["strategy"], STRATEGY_KEYS)
            rows = list(matrix_rows(render(spec["strategy"]["matrix"], ctx), name))
            if not rows:
                return [
                    JobRun(name, "failure", steps=[Step("matrix", None, "failure", log="empty")])
                ]
        runs = []
        for index, row in enumerate(rows):
            runs.append(self._run_row(name, spec, ctx, row, index, len(rows), state))
        return runs

    def _call(self, name: str, spec: dict, results: dict, state: _Workflow) -> JobRun:
        """A job that calls a reusable workflow of this repository (`uses: ./.github/...`)."""
        _check_keys(f"job {name!r}", spec, CALL_KEYS)
        needs, status = self._needs_ctx(spec, results)
        ctx = self._contexts(needs, state)
        if not condition(spec.get("if"), ctx, status):
            return JobRun(name, "skipped")
        uses = str(spec["uses"])
        if not uses.startswith("./") or "@" in uses or "strategy" in spec:
            raise Unsupported(f"job {name}: uses {uses}: only this repository's workflows, once")
        target = state.path.resolve().parents[2] / uses
        called = load_yaml(target)
        on = called.get("on") if isinstance(called.get("on"), dict) else {}
        if "workflow_call" not in on:
            raise Unsupported(f"{uses} has no workflow_call trigger")
        declared = on["workflow_call"] or {}
        inputs = typed_inputs(declared.get("inputs") or {}, render(spec.get("with", {}), ctx),
                              f"job {name} ({uses})")  # fmt: skip
        given = spec.get("secrets")
        if given == "inherit":
            secrets = state.secrets
        else:
            secrets = {"GITHUB_TOKEN": self.secrets["GITHUB_TOKEN"]}
            secrets.update({k: _text(render(v, ctx)) for k, v in (given or {}).items()})
        jobs = self.run_workflow(target, inputs=inputs, secrets=secrets)
        verdict = _aggregate([r for runs in jobs.values() for r in runs])["result"]
        octx = {"github": self.github, "inputs": inputs, "vars": self.vars,
                "jobs": Strict("job", {j: _aggregate(r) for j, r in jobs.items()})}  # fmt: skip
        outputs = {
            key: _text(render((out or {}).get("value", ""), octx))
            for key, out in (declared.get("outputs") or {}).items()
        }
        return JobRun(name, verdict, outputs=outputs, called=jobs)

    def _run_row(self, name, spec, ctx, row, index, total, state: _Workflow) -> JobRun:
        ctx = dict(ctx)
        if row is not None:
            ctx["matrix"] = row
            ctx["strategy"] = {"job-index": index, "job-total": total, "fail-fast": False}
        run = JobRun(name, "success", matrix=row)
        run.runs_on = render(spec["runs-on"], ctx)
        run.concurrency = render(spec.get("concurrency"), ctx)
        folder = f"{name}-{index}"
        if folder in self._rows:  # the same job name in two called workflows
            folder = f"{folder}-{len(self._rows)}"
        self._rows.add(folder)
        job = _JobState(self.work / folder, None)
        job.workflow_env = state.env
        job.job_env = {k: _text(render(v, ctx)) for k, v in (spec.get("env") or {}).items()}
        steps_ctx: dict[str, Any] = {}
        failed = False
        for step in spec["steps"]:
            env_ctx = {**job.workflow_env, **job.job_env, **job.env_file_values}
            sctx = {**ctx, "steps": Strict("step id", steps_ctx), "runner": self._runner_ctx(job),
                    "env": env_ctx}  # fmt: skip
            if not condition(step.get("if"), sctx, _status(failed)):
                result = Step(step.get("name", step.get("uses", "")), step.get("id"), "skipped")
            elif (key := _replaced(step, self.replace)) is not None:
                result = Step(step.get("name", step.get("uses", "")), step.get("id"), "replaced")
                result.outputs = dict(self.replace[key])
                result.log = "not run: the test provides this step's outputs"
            elif "run" in step:
                result = self._run_step(step, sctx, job, job.workspace)
            else:
                result = self._uses(step, sctx, job, run)
            conclusion = result.outcome
            if conclusion == "failure" and truthy(render(step.get("continue-on-error"), sctx)):
                conclusion = "success"  # the step failed; the job goes on as if it had not
            if conclusion == "failure":
                failed = True
            job.steps.append(result)
            if result.id:
                steps_ctx[result.id] = {"outputs": result.outputs, "outcome": result.outcome,
                                        "conclusion": conclusion}  # fmt: skip
        run.steps = job.steps
        run.summary = job.summary
        run.result = "failure" if failed else "success"
        octx = {**ctx, "steps": Strict("step id", steps_ctx)}
        run.outputs = {k: _text(render(v, octx)) for k, v in spec.get("outputs", {}).items()}
        return run

    def _uses(self, step: dict, ctx: dict, job: _JobState, run: JobRun) -> Step:
        uses = step["uses"]
        with_ = render(step.get("with", {}), ctx)
        name = step.get("name", uses)
        action = uses.split("@", 1)[0]
        try:
            if uses == "./" or uses.startswith("./"):
                done = self.run_action((job.workspace / uses).resolve(), with_, job)
                log = "\n".join(
                    f"  [{s.name}: {s.outcome}, {s.seconds:.1f}s]\n{s.log}" for s in done.steps
                )
                return Step(name, step.get("id"), done.outcome, done.outputs, log)
            if action in self.actions:
                done = self.run_action(self.actions[action], with_, job)
                log = "\n".join(
                    f"  [{s.name}: {s.outcome}, {s.seconds:.1f}s]\n{s.log}" for s in done.steps
                )
                return Step(name, step.get("id"), done.outcome, done.outputs, log)
            if action == "actions/checkout":
                head = self._checkout(with_, job)
                if run.head is None or with_.get("ref"):  # the job's commit, not its tools'
                    run.head = head
                return Step(name, step.get("id"), "success", log=f"checked out {head}")
            if action == "actions/upload-artifact":
                return Step(name, step.get("id"), "success", log=self._upload(with_, job))
            if action == "actions/download-artifact":
                return Step(name, step.get("id"), "success", log=self._download(with_, job))
            if action == "actions/github-script":
                line, extra = github_script_step(with_, self.github["token"])
                script = {"name": name, "id": step.get("id"), "run": line,
                          "env": step.get("env", {})}  # fmt: skip
                return self._run_step(script, ctx, job, job.workspace, extra)
            if action == "dorny/paths-filter":
                outputs, log = paths_filter(with_, job.workspace, self.github["event"])
                return Step(name, step.get("id"), "success", outputs, log)
            if action == "actions/setup-python":
                outputs, log = setup_python(with_, job.extra_path)
                return Step(name, step.get("id"), "success", outputs, log)
        except (subprocess.CalledProcessError, RuntimeError) as exc:
            return Step(name, step.get("id"), "failure", log=str(exc))
        raise Unsupported(f"uses: {uses}")


@dataclass
class _Workflow:
    """One workflow being run: its file, `inputs` and `secrets` contexts, evaluated `env`."""

    path: Path
    inputs: dict[str, Any]
    secrets: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)


def _aggregate(runs: list[JobRun]) -> dict[str, Any]:
    """A job's `needs` entry from its runs (matrix rows): failure wins, all skipped is skipped;
    the outputs of every run, a later row's non-empty value last."""
    verdicts = {r.result for r in runs}
    result = (
        "failure" if "failure" in verdicts else "skipped" if verdicts == {"skipped"} else "success"
    )
    outputs: dict[str, str] = {}
    for r in runs:
        outputs.update({k: v for k, v in r.outputs.items() if v})
    return {"result": result, "outputs": outputs}


def _replaced(step: dict, replace: dict) -> str | None:
    """The key the test replaced this step by: its id, its name, or the action it uses."""
    for key in (step.get("id"), step.get("name")):
        if key is not None and key in replace:
            return key
    uses = str(step.get("uses", "")).split("@", 1)[0]
    return uses if uses and uses in replace else None


class _JobState:
    def __init__(self, root: Path, job_env: dict | None):
        self.workspace = root / "workspace"
        self.temp = root / "files"
        self.workspace.mkdir(parents=True)
        self.temp.mkdir(parents=True)
        self.job_env: dict[str, str] = job_env or {}
        self.workflow_env: dict[str, str] = {}
        self.env_file_values: dict[str, str] = {}
        self.extra_path: list[str] = []
        self.summary = ""
        self.steps: list[Step] = []
        self.counter = 0  # every bash step, the action's included, gets its own files


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        raise Unsupported(f"an object or array where a string is expected: {value!r}")
    return str(value)


def _order(jobs: dict[str, dict]) -> list[str]:
    """Jobs in `needs` order, ties in file order."""
    done: list[str] = []
    while len(done) < len(jobs):
        ready = [
            j
            for j, spec in jobs.items()
            if j not in done
            and all(
                n in done
                for n in (
                    [spec["needs"]] if isinstance(spec.get("needs"), str) else spec.get("needs", [])
                )
            )
        ]
        if not ready:
            raise Unsupported("cyclic needs")
        done.append(ready[0])
    return done


def run_scheduled(
    workflow: Path,
    origin: Path,
    work: Path,
    *,
    cron: str,
    run_id: str,
    repo: str,
    token: str,
    api_url: str,
    runner_temp: Path,
    **runner: Any,
) -> dict[str, list[JobRun]]:
    """`workflow` run by its `schedule` trigger (`cron`) on `origin`'s main, in `work`, as
    GitHub's runner would start it: the context and the job's GITHUB_* environment."""
    sha = subprocess.run(["git", "-C", str(origin), "rev-parse", "main"], capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    github = {
        "event_name": "schedule", "event": {"schedule": cron}, "repository": repo,
        "repository_owner": repo.split("/")[0], "token": token, "sha": sha,
        "ref": "refs/heads/main", "api_url": api_url, "server_url": "https://github.example",
        "run_id": run_id,
    }  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update(
        CI="true", GITHUB_ACTIONS="true", GITHUB_EVENT_NAME="schedule", GITHUB_REPOSITORY=repo,
        GITHUB_API_URL=api_url, GITHUB_SERVER_URL="https://github.example", GITHUB_SHA=sha,
        GITHUB_REF="refs/heads/main", GITHUB_RUN_ID=run_id, RUNNER_TEMP=str(runner_temp),
    )  # fmt: skip
    job_runner = Runner(origin, work, runner_temp=runner_temp, github=github, env=env, **runner)
    job_runner.env["GITHUB_EVENT_PATH"] = str(job_runner.event_path)
    return job_runner.run_workflow(workflow)
