"""GitHub Actions runs, jobs and job logs over REST (edge), through a `GitHubClient`'s
requester, so every request shares its retry and rate-limit budget.

A job log is a 302 from the API to a short-lived signed URL on another host; it is fetched with
a session that carries no credentials, and read as a stream of lines.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from ci_budget.github.client import GitHubClient
from ci_budget.github.retry import GitHubError
from ci_budget.history.imports import JobInfo

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
CHUNK = 1 << 16


class LogUnavailable(GitHubError):
    """This job's log cannot be had (expired, deleted, or its download link failed)."""

    def __init__(self, message: str, status: int | None = None, final: bool = False):
        super().__init__(message, status)
        self.final = final  # asking again later will not help


@dataclass(frozen=True)
class RunInfo:
    id: int
    attempt: int
    created_at: datetime | None
    head_sha: str | None
    conclusion: str | None


@dataclass
class RunListing:
    runs: list[RunInfo]
    etag: str | None  # of the first page
    url: str  # the first page's URL with its query: the ETag belongs to it
    not_modified: bool = False


def _when(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _job(raw: dict[str, Any]) -> JobInfo:
    return JobInfo(
        id=int(raw["id"]),
        name=str(raw.get("name") or ""),
        run_id=int(raw.get("run_id") or 0),
        conclusion=raw.get("conclusion"),
        head_sha=raw.get("head_sha"),
        runner_name=raw.get("runner_name") or None,
        labels=tuple(str(x) for x in raw.get("labels") or ()),
        completed_at=_when(raw.get("completed_at")),
    )


class Actions:
    def __init__(self, client: GitHubClient):
        self.client = client
        self.repo = client.repo_name
        self._requester = client.requester
        self._session = None
        self.api_requests = 0  # API requests made (each counts against the rate limit)

    # --- plumbing ------------------------------------------------------------------------------
    def _get(self, what: str, url: str, params=None, headers=None) -> tuple[int, dict, str]:
        self.api_requests += 1
        status, head, body = self._requester.requestJson("GET", url, params, headers or {})
        return status, head, body

    def _json(self, what: str, status: int, body: str) -> Any:
        if status >= 400:
            raise GitHubError(f"{what}: GitHub answered {status}: {_message(body)}", status)
        try:
            return json.loads(body)
        except ValueError:
            raise GitHubError(f"{what}: GitHub answered {status} with no JSON") from None

    def _pages(self, what: str, url: str, params: dict[str, Any], key: str) -> Iterator[Any]:
        status, head, body = self._get(what, url, params)
        while True:
            data = self._json(what, status, body)
            yield from data.get(key) or []
            found = _NEXT.search(head.get("link", ""))
            if not found:
                return
            status, head, body = self._get(what, found.group(1))

    def rate_remaining(self) -> tuple[int, int] | None:
        """(requests left, reset epoch) from the latest API response, None before one."""
        remaining, _limit = self._requester.rate_limiting
        if remaining < 0:
            return None
        return remaining, int(self._requester.rate_limiting_resettime or 0)

    # --- runs and jobs -------------------------------------------------------------------------
    def list_runs(
        self,
        workflow: str,
        branch: str | None,
        since: date | None,
        limit: int | None = None,
        etag: str | None = None,
        etag_url: str | None = None,
    ) -> RunListing:
        """The workflow's completed runs, newest first (at most `limit`). With the `etag` of an
        earlier identical listing, GitHub's 304 answers "nothing new" without costing quota."""
        url = f"/repos/{self.repo}/actions/workflows/{quote(workflow, safe='')}/runs"
        params: dict[str, Any] = {"status": "completed", "per_page": 100}
        params["exclude_pull_requests"] = "true"
        if branch:
            params["branch"] = branch
        if since:
            params["created"] = f">={since.isoformat()}"
        key = url + "?" + "&".join(f"{k}={params[k]}" for k in sorted(params))
        what = f"runs of workflow {workflow}"
        headers = {"If-None-Match": etag} if etag and etag_url == key else {}
        status, head, body = self._get(what, url, params, headers)
        if status == 304:
            return RunListing([], etag, key, not_modified=True)
        runs: list[RunInfo] = []
        first_etag = head.get("etag")
        while True:
            data = self._json(what, status, body)
            for raw in data.get("workflow_runs") or []:
                runs.append(
                    RunInfo(
                        id=int(raw["id"]),
                        attempt=int(raw.get("run_attempt") or 1),
                        created_at=_when(raw.get("created_at")),
                        head_sha=raw.get("head_sha"),
                        conclusion=raw.get("conclusion"),
                    )
                )
            found = _NEXT.search(head.get("link", ""))
            if (limit is not None and len(runs) >= limit) or not found:
                break
            status, head, body = self._get(what, found.group(1))
        return RunListing(runs[:limit] if limit is not None else runs, first_etag, key)

    def list_jobs(self, run_id: int) -> list[JobInfo]:
        """The latest attempt's jobs of a run."""
        url = f"/repos/{self.repo}/actions/runs/{run_id}/jobs"
        params = {"filter": "latest", "per_page": 100}
        return [_job(raw) for raw in self._pages(f"jobs of run {run_id}", url, params, "jobs")]

    # --- logs ----------------------------------------------------------------------------------
    def job_log(self, job_id: int) -> Iterator[str]:
        """The job's log, line by line, fetched from where GitHub redirects (no credentials)."""
        what = f"log of job {job_id}"
        url = f"/repos/{self.repo}/actions/jobs/{job_id}/logs"
        status, head, body = self._get(what, url)
        if status == 200:  # served in place (some GitHub Enterprise versions)
            yield from body.splitlines()
            return
        if status in (404, 410):
            raise LogUnavailable(f"log gone (GitHub answered {status})", status, final=True)
        if status not in (301, 302, 303, 307) or "location" not in head:
            raise GitHubError(f"{what}: GitHub answered {status}: {_message(body)}", status)
        yield from self._download(head["location"])

    def _download(self, location: str) -> Iterator[str]:
        if self._session is None:
            self._session = self.client.download_session()
        try:
            resp = self._session.get(location, stream=True, timeout=60, allow_redirects=True)
        except OSError as exc:  # requests' errors are OSErrors
            raise LogUnavailable(f"log download failed: {exc}") from None
        with resp:
            if resp.status_code != 200:
                final = resp.status_code in (404, 410)
                raise LogUnavailable(
                    f"the log's download link answered {resp.status_code}",
                    resp.status_code,
                    final,
                )
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            rest = ""
            try:
                for chunk in resp.iter_content(CHUNK):
                    text = rest + decoder.decode(chunk)
                    *lines, rest = text.split("\n")
                    yield from lines
            except OSError as exc:
                raise LogUnavailable(f"the log download broke off: {exc}") from None
            rest += decoder.decode(b"", final=True)
            if rest:
                yield rest


def _message(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body[:200] or "(no body)"
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return body[:200]
