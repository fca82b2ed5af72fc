"""How sglang's run_suite.py runs files, read from its files (never run).

Per-file timeouts as its workflows apply them:

- `test/run_suite.py`: the `--timeout-per-file` default (1200 s on every recent commit);
- jobs calling a reusable stage workflow (`pr-test.yml`'s `base-b-test-1-gpu-large` with
  `timeout_per_file: '1800'`): the suite's own timeout; a caller with `scheduled: true` (the
  nightly and weekly workflows) gets the est-time rule, as the stage's `--timeout-from-est-time`;
- `run_suite.py --suite NAME … --timeout-per-file N` written out in a workflow's `run:` step
  (`--timeout-from-est-time` there: the est-time rule).

Retry patterns (`--enable-retry`): the `INFRA_RETRIABLE_PATTERNS`, `NON_RETRIABLE_PATTERNS`
and `RETRIABLE_PATTERNS` lists of `python/sglang/test/ci/ci_utils.py`.

Pure: the caller passes file texts. Per-commit workflows are read first: a suite that a later
workflow also runs keeps the per-commit value.
"""

from __future__ import annotations

import ast
import re

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
        given = job.get("with") if isinstance(job.get("with"), dict) else {}
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
        if name in _PATTERN_LISTS.values() and isinstance(stmt.value, (ast.List, ast.Tuple)):
            items = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant)]
            found[name] = [v for v in items if isinstance(v, str)]
    if not found:
        return None
    return {key: found.get(name, []) for key, name in _PATTERN_LISTS.items()}
