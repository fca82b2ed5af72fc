"""The jobs of sglang's `pr-test.yml` that run per-commit suites, read the way that commit's
`compute_partitions.py` and workflows read them. Pure (parsed YAML in, data out).

A suite runs in one of two kinds of job:
- a call of a reusable stage workflow (`_REUSABLE_STAGE_USES`): `with.self_name` names the
  suite, `with.run_timeout_minutes` its budget, `with.runner_config` its runner config; the
  runner label is runner_configs.yml's `runs_on` for that config, else the job's `with.runs_on`
  (sglang 2026-05-14), else the stage workflow's own literal `runs-on` (the CPU stage);
- an inline job named by its suite (`_INLINE_SUITE_JOBS`, a pinned `_*_OVERRIDES` suite, or, in
  the layout of 2026-05-13, any job reading `partitions['SUITE']`): its `runs-on`, and the
  `timeout-minutes` of its `Run test` step (what load_run_timeouts reads), else the job's.
A label written as `${{ needs.JOB.outputs.NAME }}` is the value a workflow step writes as
`NAME=LABEL` (see `sglang.sentinel_values`).
"""

from __future__ import annotations

import re
from typing import Any

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
