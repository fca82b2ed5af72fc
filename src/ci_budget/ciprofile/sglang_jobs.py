"""sglang's jobs that run per-commit suites, and how its run_suite.py runs files in them, read
from the workflows and scripts (never run). Pure: the caller passes file texts (parsed YAML for
the jobs).

Jobs: those of `pr-test.yml`, read the way that commit's `compute_partitions.py` and workflows
read them. A suite runs in one of two kinds of job:
- a call of a reusable stage workflow (`_REUSABLE_STAGE_USES`): `with.self_name` names the
  suite, `with.run_timeout_minutes` its budget, `with.runner_config` its runner config; the
  runner label is runner_configs.yml's `runs_on` for that config, else the job's `with.runs_on`
  (sglang 2026-05-14), else the stage workflow's own literal `runs-on` (the CPU stage);
- an inline job named by its suite (`_INLINE_SUITE_JOBS`, a pinned `_*_OVERRIDES` suite, or, in
  the layout of 2026-05-13, any job reading `partitions['SUITE']`): its `runs-on`, and the
  `timeout-minutes` of its `Run test` step (what load_run_timeouts reads), else the job's.
A label written as `${{ needs.JOB.outputs.NAME }}` is the value a workflow step writes as
`NAME=LABEL` (see `sglang.sentinel_values`).

Per-file timeouts as the workflows apply them:
- `test/run_suite.py`: the `--timeout-per-file` default (1200 s on every recent commit);
- jobs calling a reusable stage workflow (`pr-test.yml`'s `base-b-test-1-gpu-large` with
  `timeout_per_file: '1800'`): the suite's own timeout; a caller with `scheduled: true` (the
  nightly and weekly workflows) gets the est-time rule, as the stage's `--timeout-from-est-time`;
- `run_suite.py --suite NAME … --timeout-per-file N` written out in a workflow's `run:` step
  (`--timeout-from-est-time` there: the est-time rule).

Retry patterns (`--enable-retry`): the `INFRA_RETRIABLE_PATTERNS`, `NON_RETRIABLE_PATTERNS`
and `RETRIABLE_PATTERNS` lists of `python/sglang/test/ci/ci_utils.py`.

Per-commit workflows are read first: a suite that a later workflow also runs keeps the
per-commit value.
"""

from __future__ import annotations

import ast
import re
from typing import Any

# --- the jobs that run suites ----------------------------------------------------------------

_OUTPUT = re.compile(r"\$\{\{\s*needs\.[\w-]+\.outputs\.(\w+)\s*\}\}")
_CONSUMED = re.compile(r"partitions\)\s*\[\s*'([^']+)'\s*\]")


def output_names(texts: list[str | None]) -> list[str]:
    """The `needs.*.outputs.NAME` a `runs-on` or `runs_on` of these workflows is written as."""
    names = set()
    for text in texts:
        for line in (text or "").splitlines():
            if re.match(r"\s*runs[-_]on\s*:", line):
                names.update(_OUTPUT.findall(line))
    return sorted(names)


def label(value: object, outputs: dict[str, str]) -> str | None:
    """A literal runner label, or an output expression's value; None for anything else."""
    if not isinstance(value, str):
        return None
    if m := _OUTPUT.fullmatch(value.strip()):
        return outputs.get(m.group(1))
    return value if "${{" not in value else None


def _minutes(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _workflow_label(data: dict | None, given: dict, outputs: dict[str, str]) -> str | None:
    """The stage workflow's `runs-on`: a literal, or `${{ inputs.X }}` given by the caller."""
    for job in ((data or {}).get("jobs") or {}).values():
        runs_on = job.get("runs-on") if isinstance(job, dict) else None
        if isinstance(runs_on, str):
            if m := re.fullmatch(r"\$\{\{\s*inputs\.(\w+)\s*\}\}", runs_on.strip()):
                return label(given.get(m.group(1)), outputs)
            return label(runs_on, outputs)
    return None


def stage_jobs(jobs: dict, uses: list[str], workflows: dict, outputs: dict[str, str]) -> dict:
    """suite -> {"timeout", "runner_config", "label"} (each when known) for the stage calls."""
    out: dict[str, dict] = {}
    for job_id, job in jobs.items():
        if not isinstance(job, dict) or not isinstance(job.get("uses"), str):
            continue
        path = job["uses"].removeprefix("./")
        if path not in uses:
            continue
        given = given if isinstance(given := job.get("with"), dict) else {}
        entry: dict = {}
        if (minutes := _minutes(given.get("run_timeout_minutes"))) is not None:
            entry["timeout"] = minutes
        if isinstance(given.get("runner_config"), str):
            entry["runner_config"] = given["runner_config"]
        if found := _workflow_label(workflows.get(path), given, outputs):
            entry["label"] = found
        out[str(given.get("self_name", job_id))] = entry
    return out


def _run_test_minutes(job: dict) -> float | None:
    steps = steps if isinstance(steps := job.get("steps"), list) else []
    found = [s.get("timeout-minutes") for s in steps
             if isinstance(s, dict) and s.get("name") == "Run test" and "timeout-minutes" in s]  # fmt: skip
    return _minutes(found[0]) if len(found) == 1 else _minutes(job.get("timeout-minutes"))


def consumed(jobs: dict) -> list[str]:
    """Jobs that read `partitions['SUITE']` for a suite of their own name (the layout of
    2026-05-13, before reusable stage workflows)."""
    out = []
    for job_id, job in jobs.items():
        if isinstance(job, dict) and "uses" not in job and job_id in _CONSUMED.findall(str(job)):
            out.append(job_id)
    return out


def inline_jobs(jobs: dict, suites: list[str], outputs: dict[str, str]) -> dict:
    """suite -> {"timeout", "label"} for the inline jobs of `suites` that pr-test.yml has."""
    out: dict[str, dict] = {}
    for suite in suites:
        job = jobs.get(suite)
        if not isinstance(job, dict) or "uses" in job:
            continue
        entry: dict = {}
        if (minutes := _run_test_minutes(job)) is not None:
            entry["timeout"] = minutes
        if found := label(job.get("runs-on"), outputs):
            entry["label"] = found
        out[suite] = entry
    return out


# --- how run_suite.py runs files: per-file timeouts, retry patterns ----------------------------

EST_TIME = "est-time"
_SUITE = re.compile(r"--suite[ =]([A-Za-z0-9_.-]+)(?=[\s\"']|$)")
_SECONDS = re.compile(r"--timeout-per-file[ =](\d+(?:\.\d+)?)(?=[\s\"']|$)")


def run_suite_default(source: str | None) -> float | None:
    """The `default=` of run_suite.py's `--timeout-per-file` argument, or None."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument" or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and first.value == "--timeout-per-file"):
            continue
        for kw in node.keywords:
            if kw.arg == "default" and isinstance(kw.value, ast.Constant):
                value = kw.value.value
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    return float(value)
    return None


def _seconds(value: object) -> float | None:
    try:
        seconds = float(str(value).strip())
    except ValueError:
        return None
    return seconds if seconds > 0 else None


def stage_job_timeouts(workflow: dict | None, stage_texts: dict[str, str]) -> dict:
    """suite -> seconds or "est-time", for the jobs of one workflow that call a reusable stage
    workflow (`stage_texts`: its repo path -> text). An input counts only where the stage
    workflow passes it on to run_suite.py."""
    out: dict[str, float | str] = {}
    jobs = (workflow or {}).get("jobs")
    for job_id, job in jobs.items() if isinstance(jobs, dict) else ():
        if not isinstance(job, dict) or not isinstance(job.get("uses"), str):
            continue
        stage = stage_texts.get(job["uses"].removeprefix("./"))
        given = given if isinstance(given := job.get("with"), dict) else {}
        if stage is None:
            continue
        suite = str(given.get("self_name", job_id))
        if given.get("scheduled") is True and "--timeout-from-est-time" in stage:
            out[suite] = EST_TIME
        elif "inputs.timeout_per_file" in stage and (s := _seconds(given.get("timeout_per_file"))):
            out[suite] = s
    return out


def _commands(text: str) -> list[str]:
    """Shell commands that call run_suite.py, continuation lines joined."""
    joined = re.sub(r"\\[ \t]*\n", " ", text)
    return [line for line in joined.splitlines() if "run_suite.py" in line]


def inline_timeouts(text: str) -> dict:
    """suite -> seconds or "est-time" for `run_suite.py --suite NAME` calls written in a
    workflow's steps that set a timeout; a suite given by an expression is not read."""
    out: dict[str, float | str] = {}
    for line in _commands(text):
        suite = _SUITE.search(line)
        if suite is None:
            continue
        if re.search(r"--timeout-from-est-time(?=\s|$)", line):
            out.setdefault(suite.group(1), EST_TIME)
        elif seconds := _SECONDS.search(line):
            out.setdefault(suite.group(1), float(seconds.group(1)))
    return out


def file_timeouts(
    workflows: dict[str, dict | None], texts: dict[str, str], stage_texts: dict[str, str]
) -> dict:
    """suite -> seconds or "est-time" over every workflow, in the order given (per-commit
    first); `workflows` holds the parsed ones that call a stage workflow, `texts` all."""
    out: dict[str, float | str] = {}
    for path in texts:
        found = stage_job_timeouts(workflows.get(path), stage_texts) if path in workflows else {}
        found |= {s: v for s, v in inline_timeouts(texts[path]).items() if s not in found}
        for suite, value in found.items():
            out.setdefault(suite, value)
    return out


_PATTERN_LISTS = {
    "infra": "INFRA_RETRIABLE_PATTERNS",
    "never": "NON_RETRIABLE_PATTERNS",
    "retriable": "RETRIABLE_PATTERNS",
}


def retry_patterns(source: str | None) -> dict[str, list[str]] | None:
    """{"infra", "never", "retriable"} from ci_utils.py's pattern lists, or None when it has
    none of them (a list it lacks is empty)."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError):
        return None
    found: dict[str, list[str]] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        name = getattr(stmt.targets[0], "id", None)
        if not isinstance(name, str) or not isinstance(stmt.value, (ast.List, ast.Tuple)):
            continue
        if name in _PATTERN_LISTS.values():
            items = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant)]
            found[name] = [v for v in items if isinstance(v, str)]
    if not found:
        return None
    return {key: found.get(name, []) for key, name in _PATTERN_LISTS.items()}
