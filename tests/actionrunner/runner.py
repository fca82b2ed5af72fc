"""Run action.yml's steps, and the jobs of a workflow, the way GitHub's runner does.

What is real: every `run:` is written to a file and run with `bash --noprofile --norc -eo
pipefail {0}`; GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY and GITHUB_EVENT_PATH
are files; `${{ }}` is evaluated only where GitHub evaluates it (never inside the script text);
`if:` follows GitHub's status rules; jobs run in `needs` order with their matrix rows.

What is a local equivalent, said here once: `actions/checkout` is a `git clone` of the origin
repository plus `git checkout <ref>` (the PR head commit where GitHub would use its merge
commit); `actions/upload-artifact` / `download-artifact` copy files to and from a folder per
artifact name. Any other `uses:` raises `Unsupported`. Steps a test replaces (`replace`) do not
run: their outputs are given by the test, and the step log says so.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .expressions import Strict, Unsupported, condition, render

STEP_TIMEOUT = 600
# Keys the harness honours (timeout-minutes is accepted and not enforced); anything else, such
# as continue-on-error, would change the outcome, so it is refused rather than ignored.
STEP_KEYS = {"name", "id", "if", "run", "shell", "env", "working-directory", "uses", "with"}
STEP_KEYS |= {"timeout-minutes"}
JOB_KEYS = {"name", "needs", "if", "runs-on", "permissions", "concurrency", "strategy"}
JOB_KEYS |= {"outputs", "steps", "env", "timeout-minutes"}


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

    def log(self) -> str:
        return "\n".join(
            f"--- {s.name} [{s.outcome}, {s.seconds:.1f}s]\n{s.log}" for s in self.steps
        )


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


def _status(failed: bool) -> dict[str, bool]:
    return {"success": not failed, "failure": failed, "always": True, "cancelled": False}


class Runner:
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
        cache_store: Path | None = None,
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
        # actions/cache: one folder per scope and key; shared by the runs of one test
        self.caches = cache_store or work / "caches"
        self.event_path = work / "event.json"
        self.event_path.write_text(json.dumps(github["event"]), encoding="utf-8")

    # --- one bash step -------------------------------------------------------------------
    def _bash(self, script: str, env: dict[str, str], cwd: Path, files: Path) -> tuple[int, str]:
        files.mkdir(parents=True, exist_ok=True)
        path = files / "script.sh"
        path.write_text(script, encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=STEP_TIMEOUT,
        )
        return done.returncode, done.stdout

    def _run_step(self, step: dict, ctx: dict, job: _JobState, where: Path) -> Step:
        name = step.get("name") or step.get("id") or step.get("run", "")[:40]
        _check_keys(f"step {name!r}", step, STEP_KEYS)
        env = {**self.env, **job.env_file_values}
        env.update({k: str(render(v, ctx)) for k, v in (job.job_env or {}).items()})
        env.update({k: _text(render(v, ctx)) for k, v in step.get("env", {}).items()})
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
        shell = step.get("shell", "bash")
        if shell != "bash":
            raise Unsupported(f"step {name!r}: shell {shell!r}")
        started = time.monotonic()
        rc, log = self._bash(step["run"], env, cwd, files)
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

    # --- local stand-ins for the artifact and checkout actions ---------------------------------
    def _checkout(self, with_: dict, job: _JobState) -> str:
        dest = job.workspace / with_.get("path", "")
        if dest.exists() and any(dest.iterdir()):
            shutil.rmtree(dest)
        subprocess.run(["git", "clone", "-q", str(self.origin), str(dest)], check=True)
        event = self.github["event"]
        ref = with_.get("ref") or ""
        if not ref and self.github["event_name"] == "pull_request":
            ref = event["pull_request"]["head"]["sha"]  # GitHub: the merge commit
        if not ref:
            ref = self.github["sha"]
        subprocess.run(["git", "-C", str(dest), "checkout", "-q", ref], check=True)
        head = subprocess.run(
            ["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        return head

    def _upload(self, with_: dict, job: _JobState) -> str:
        name = str(with_["name"])
        store = self.artifacts / name
        if store.exists():
            raise RuntimeError(f"artifact {name!r} uploaded twice (v4 rejects that)")
        found = []
        for line in str(with_["path"]).splitlines():
            if line.strip():
                pattern = line.strip()
                base = Path(pattern) if Path(pattern).is_absolute() else job.workspace / pattern
                found += [Path(p) for p in _glob(base)]
        if not found:
            if with_.get("if-no-files-found", "warn") == "error":
                raise RuntimeError(f"artifact {name!r}: no files")
            return f"warning: no files for artifact {name!r}"
        store.mkdir(parents=True)
        for path in found:  # a folder uploads its files (the only shape the workflows use)
            for f in sorted(path.iterdir()) if path.is_dir() else [path]:
                shutil.copy2(f, store / f.name)
        return f"uploaded {[p.name for p in found]} as {name!r}"

    def _download(self, with_: dict, job: _JobState) -> str:
        dest = Path(str(with_.get("path", ".")))
        dest = dest if dest.is_absolute() else job.workspace / dest
        pattern = with_.get("pattern") or with_.get("name") or "*"
        names = sorted(p.name for p in self.artifacts.iterdir() if fnmatch.fnmatch(p.name, pattern))
        for name in names:
            target = dest if with_.get("merge-multiple") else dest / name
            target.mkdir(parents=True, exist_ok=True)
            for f in (self.artifacts / name).iterdir():
                shutil.copy2(f, target / f.name)
        return f"downloaded {names}"

    def _cache_scopes(self) -> list[str]:
        """Where a run may restore from: its own ref, and for a PR the base branch (GitHub's
        cache isolation); it saves into its own ref's scope only."""
        ref = str(self.github.get("ref") or "refs/heads/main")
        event = self.github["event"]
        base = (event.get("pull_request") or {}).get("base", {}).get("ref")
        return [ref] + ([f"refs/heads/{base}"] if base else [])

    def _cache_restore(self, with_: dict, job: _JobState) -> tuple[str, str]:
        path = Path(str(with_["path"]))
        key = str(with_["key"])
        prefixes = [k.strip() for k in str(with_.get("restore-keys", "")).splitlines() if k.strip()]
        hit, log = "false", f"cache not found for {key}"
        for scope in self._cache_scopes():
            store = self.caches / scope.replace("/", "_")
            found = [store / key] if (store / key).is_dir() else []
            for prefix in prefixes:
                newest = sorted(store.glob(_glob_escape(prefix) + "*"), key=_age)
                found += newest
            if found:
                hit = "true" if found[0].name == key else "false"
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(found[0] / path.name, path)
                log = f"restored {found[0].name} from {scope}"
                break
        job.post.append(lambda: self._cache_save(path, key, hit))
        return hit, log

    def _cache_save(self, path: Path, key: str, hit: str) -> str:
        store = self.caches / self._cache_scopes()[0].replace("/", "_") / key
        if hit == "true" or store.exists() or not path.is_file():
            return f"not saved: {key}"
        store.mkdir(parents=True)
        shutil.copy2(path, store / path.name)
        return f"saved {key}"

    # --- jobs --------------------------------------------------------------------------------
    def run_workflow(self, path: Path) -> dict[str, JobRun | list[JobRun]]:
        wf = load_yaml(path)
        if wf.get("env"):
            raise Unsupported("workflow-level env")
        results: dict[str, list[JobRun]] = {}
        for name in _order(wf["jobs"]):
            spec = wf["jobs"][name]
            results[name] = self._run_job(name, spec, results)
            if self.between_jobs:
                for run in results[name]:
                    self.between_jobs(name, run)
        return results

    def _needs_ctx(self, spec: dict, results: dict[str, list[JobRun]]) -> tuple[dict, bool]:
        needs = spec.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        ctx, failed = {}, False
        for need in needs:
            runs = results[need]
            verdicts = {r.result for r in runs}
            result = (
                "failure"
                if "failure" in verdicts
                else "skipped"
                if verdicts == {"skipped"}
                else "success"
            )
            outputs: dict[str, str] = {}
            for r in runs:
                outputs.update({k: v for k, v in r.outputs.items() if v})
            ctx[need] = {"result": result, "outputs": outputs}
            failed = failed or result != "success"
        return Strict("job in needs", ctx), failed

    def _contexts(self, needs: dict) -> dict[str, Any]:
        event = self.github["event"]
        inputs = event.get("inputs", {}) if self.github["event_name"] == "workflow_dispatch" else {}
        return {"github": self.github, "needs": needs, "vars": self.vars, "inputs": inputs}

    def _run_job(self, name: str, spec: dict, results: dict) -> list[JobRun]:
        _check_keys(f"job {name!r}", spec, JOB_KEYS)
        for step in spec["steps"]:
            _check_keys(
                f"job {name!r} step {step.get('name', step.get('uses'))!r}", step, STEP_KEYS
            )
        needs, failed = self._needs_ctx(spec, results)
        ctx = self._contexts(needs)
        if not condition(spec.get("if"), ctx, _status(failed)):
            return [JobRun(name, "skipped")]
        rows: list[dict | None] = [None]
        if "strategy" in spec:
            matrix = render(spec["strategy"]["matrix"], ctx)
            if set(matrix) != {"include"}:
                raise Unsupported(f"job {name}: only include-style matrices")
            rows = list(matrix["include"])
            if not rows:
                return [
                    JobRun(name, "failure", steps=[Step("matrix", None, "failure", log="empty")])
                ]
        runs = []
        for index, row in enumerate(rows):
            runs.append(self._run_row(name, spec, ctx, row, index, len(rows)))
        return runs

    def _run_row(self, name, spec, ctx, row, index, total) -> JobRun:
        ctx = dict(ctx)
        if row is not None:
            ctx["matrix"] = row
            ctx["strategy"] = {"job-index": index, "job-total": total, "fail-fast": False}
        run = JobRun(name, "success", matrix=row)
        run.runs_on = render(spec["runs-on"], ctx)
        run.concurrency = render(spec.get("concurrency"), ctx)
        job = _JobState(self.work / f"{name}-{index}", spec.get("env"))
        steps_ctx: dict[str, Any] = {}
        failed = False
        for step in spec["steps"]:
            sctx = {**ctx, "steps": Strict("step id", steps_ctx), "runner": self._runner_ctx(job)}
            if not condition(step.get("if"), sctx, _status(failed)):
                result = Step(step.get("name", step.get("uses", "")), step.get("id"), "skipped")
            elif step.get("id") in self.replace:
                result = Step(step.get("name", ""), step["id"], "replaced")
                result.outputs = dict(self.replace[step["id"]])
                result.log = "not run: the test provides this step's outputs"
            elif "run" in step:
                job.job_env = spec.get("env")
                result = self._run_step(step, sctx, job, job.workspace)
            else:
                result = self._uses(step, sctx, job, run)
            if result.outcome == "failure":
                failed = True
            job.steps.append(result)
            if result.id:
                steps_ctx[result.id] = {"outputs": result.outputs, "outcome": result.outcome}
        for post in job.post if not failed else []:  # actions/cache saves after a success
            job.steps.append(Step("post", None, "success", log=post()))
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
            if action == "actions/checkout":
                head = self._checkout(with_, job)
                if run.head is None or with_.get("ref"):  # the job's commit, not its tools'
                    run.head = head
                return Step(name, step.get("id"), "success", log=f"checked out {head}")
            if action == "actions/upload-artifact":
                return Step(name, step.get("id"), "success", log=self._upload(with_, job))
            if action == "actions/download-artifact":
                return Step(name, step.get("id"), "success", log=self._download(with_, job))
            if action == "actions/cache":
                hit, log = self._cache_restore(with_, job)
                return Step(name, step.get("id"), "success", {"cache-hit": hit}, log)
        except (subprocess.CalledProcessError, RuntimeError) as exc:
            return Step(name, step.get("id"), "failure", log=str(exc))
        raise Unsupported(f"uses: {uses}")


class _JobState:
    def __init__(self, root: Path, job_env: dict | None):
        self.workspace = root / "workspace"
        self.temp = root / "files"
        self.workspace.mkdir(parents=True)
        self.temp.mkdir(parents=True)
        self.job_env = job_env
        self.env_file_values: dict[str, str] = {}
        self.extra_path: list[str] = []
        self.summary = ""
        self.steps: list[Step] = []
        self.counter = 0  # every bash step, the action's included, gets its own files
        self.post: list[Callable[[], str]] = []  # post steps (actions/cache's save)


def _age(path: Path) -> int:
    return -path.stat().st_mtime_ns  # newest first, as restore-keys pick


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


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


def _glob(path: Path) -> list[str]:
    import glob

    return sorted(p for p in glob.glob(str(path)) if Path(p).is_file() or Path(p).is_dir())


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
