"""GitHub Actions operations: workflow runs, their jobs, and job logs behind a signed redirect.

A job's log is not served by the API: `GET .../actions/jobs/{id}/logs` answers 302 to a signed
URL on another host name (`State.log_host`, the same server), like GitHub's blob storage. That
host must never see a credential; a request that carries one is recorded as invalid.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from .routes import OPERATIONS, Req, Resp, error, not_found, paginate
from .spec import example
from .state import Job, State, WorkflowRun

LOGS = "/_logs/"  # path prefix of the log host
COMPLETED = {
    "success",
    "failure",
    "cancelled",
    "skipped",
    "timed_out",
    "neutral",
    "action_required",
}


def _created_filter(text: str):
    """GitHub's `created` search syntax, the forms the project sends: `>=YYYY-MM-DD` (or a
    full `>=YYYY-MM-DDTHH:MM:SSZ`), a date."""
    if text.startswith(">="):
        start = text[2:]
        return lambda stamp: stamp[: len(start)] >= start
    return lambda stamp: stamp[:10] == text


def _q(req: Req, key: str) -> str | None:
    values = req.query.get(key)
    return values[-1] if values else None


def render_run(base: str, state: State, run: WorkflowRun) -> dict[str, Any]:
    out = example("workflow-run-paginated")["workflow_runs"][0]
    api = f"{base}/repos/{state.repo}/actions/runs/{run.id}"
    out.update(
        id=run.id, name=run.workflow, head_branch=run.branch, head_sha=run.head_sha, status=run.status,
        conclusion=run.conclusion, run_attempt=run.attempt, event=run.event,
        path=f".github/workflows/{run.workflow}@{run.branch}", created_at=run.created_at,
        updated_at=run.created_at, run_started_at=run.created_at, url=api,
        jobs_url=f"{api}/jobs", logs_url=f"{api}/logs", run_number=run.id % 100000,
        rerun_url=f"{api}/rerun", cancel_url=f"{api}/cancel", check_suite_url=f"{api}/check-suite",
    )  # fmt: skip
    out["head_commit"]["id"] = run.head_sha
    for who in ("actor", "triggering_actor"):
        if isinstance(out.get(who), dict):
            out[who] = dict(out[who], login=run.actor)
    return out


def render_job(base: str, state: State, job: Job) -> dict[str, Any]:
    out = example("job-paginated")["jobs"][0]
    run = state.runs[job.run_id]
    api = f"{base}/repos/{state.repo}/actions"
    out.update(
        id=job.id, run_id=job.run_id, run_url=f"{api}/runs/{job.run_id}", name=job.name,
        head_sha=run.head_sha, head_branch=run.branch, url=f"{api}/jobs/{job.id}",
        status=job.status, conclusion=job.conclusion, runner_name=job.runner_name,
        labels=list(job.labels), started_at=job.started_at or run.created_at,
        completed_at=job.completed_at, created_at=run.created_at, run_attempt=run.attempt,
    )  # fmt: skip
    return out


def _etag(body: Any) -> str:
    return '"' + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:32] + '"'


def list_runs(state: State, req: Req) -> Resp:
    workflow = req.params["workflow_id"]
    runs = [r for r in state.runs.values() if workflow in (r.workflow, str(_workflow_id(r)))]
    branch, status, created = _q(req, "branch"), _q(req, "status"), _q(req, "created")
    if _q(req, "actor"):
        runs = [r for r in runs if r.actor == _q(req, "actor")]
    if branch:
        runs = [r for r in runs if r.branch == branch]
    if status == "completed":
        runs = [r for r in runs if r.status == "completed"]
    elif status in COMPLETED:
        runs = [r for r in runs if r.conclusion == status]
    elif status:
        runs = [r for r in runs if r.status == status]
    if created:
        keep = _created_filter(created)
        runs = [r for r in runs if keep(r.created_at)]
    runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)  # newest first, like GitHub
    page = paginate(req, [render_run(req.base, state, r) for r in runs])
    body = {"total_count": len(runs), "workflow_runs": page.body}
    tag = _etag(body)
    if req.headers.get("if-none-match") == tag:
        return Resp(304, None, {"ETag": tag, **page.headers})
    return Resp(200, body, {"ETag": tag, **page.headers})


def list_repo_runs(state: State, req: Req) -> Resp:
    """Every workflow's runs; the filters the project sends: head_sha, status, event."""
    runs = list(state.runs.values())
    head_sha, status, event = _q(req, "head_sha"), _q(req, "status"), _q(req, "event")
    if head_sha:
        runs = [r for r in runs if r.head_sha == head_sha]
    if status:
        runs = [r for r in runs if status in (r.status, r.conclusion)]
    if event:
        runs = [r for r in runs if r.event == event]
    runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    page = paginate(req, [render_run(req.base, state, r) for r in runs])
    return Resp(200, {"total_count": len(runs), "workflow_runs": page.body}, page.headers)


def _workflow_id(run: WorkflowRun) -> int:
    return int(hashlib.sha256(run.workflow.encode()).hexdigest()[:6], 16)


def list_jobs(state: State, req: Req) -> Resp:
    run_id = int(req.params["run_id"])
    if run_id not in state.runs:
        return not_found()
    jobs = sorted((j for j in state.jobs.values() if j.run_id == run_id), key=lambda j: j.id)
    page = paginate(req, [render_job(req.base, state, j) for j in jobs])
    return Resp(200, {"total_count": len(jobs), "jobs": page.body}, page.headers)


def signature(state: State, job_id: int) -> str:
    return hmac.new(state.log_key.encode(), str(job_id).encode(), "sha256").hexdigest()


def job_logs(state: State, req: Req) -> Resp:
    job = state.jobs.get(int(req.params["job_id"]))
    if job is None:
        return not_found()
    if job.log is None:
        return error(410, "Gone")
    port = urlsplit(req.base).port
    expires = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H%%3A%M%%3A%SZ")
    location = (
        f"http://{state.log_host}:{port}{LOGS}{job.id}"
        f"?urlExpires={expires}&urlSigningMethod=HMACV1&urlSignature={signature(state, job.id)}"
    )
    return Resp(302, None, {"Location": location})


def serve_log(state: State, path: str, query: dict[str, list[str]], authorization: str) -> Resp:
    """The log host: a plain-text log for a correctly signed URL, without credentials."""
    tail = path[len(LOGS) :]
    if authorization:
        state.invalid.append(f"GET {path}: a credential was sent to the log host")
        return Resp(400, text="credentials are not accepted here")
    if not tail.isdigit() or (query.get("urlSignature") or [""])[-1] != signature(state, int(tail)):
        return Resp(403, text="AuthenticationFailed: signature mismatch")
    job = state.jobs.get(int(tail))
    if job is None or job.log is None:
        return Resp(404, text="BlobNotFound")
    return Resp(200, text=job.log)


OPERATIONS.update({
    "actions/list-workflow-runs": list_runs,
    "actions/list-jobs-for-workflow-run": list_jobs,
    "actions/download-job-logs-for-workflow-run": job_logs,
    "actions/list-workflow-runs-for-repo": list_repo_runs,
})  # fmt: skip
