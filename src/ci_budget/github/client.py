"""Talking to GitHub (edge): PyGithub with bounded, counted retries, and the sticky PR comment.

Every HTTP request goes through one urllib3 `Retry` (`_Retry`), which counts responses, retries
5xx with backoff, waits out rate limits (Retry-After / x-ratelimit-reset) up to a cap through an
injectable `sleep`, and lets every other 4xx through at once so PyGithub raises with GitHub's
message. The token is only ever handed to PyGithub; nothing here prints it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from ci_budget.render.sticky import (  # noqa: F401 - re-exported: part of this module's API
    CUT_NOTE,
    MAX_BODY,
    StickyError,
    first_line,
    fit,
    fit_section,
    marker_for,
    merge_body,
    parse_sections,
)

DEFAULT_API_URL = "https://api.github.com"
NOT_ACCESSIBLE = "Resource not accessible by integration"
REPORT_WORKFLOW = "bitexact-budget-report.yml"
PERMISSIONS = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read"}
PERMISSIONS |= {"read": "read", "none": "none"}


class GitHubError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status


class ReadOnlyToken(GitHubError):
    """The token may read but not write: GITHUB_TOKEN on a pull request from a fork."""


class PullInfo(BaseModel):
    number: int
    state: str
    draft: bool = False
    head_sha: str
    head_ref: str
    head_repo: str | None = None  # full name; None when the fork was deleted
    base_sha: str
    base_ref: str
    labels: list[str] = []
    user: str
    fork: bool = False


class StickyResult(BaseModel):
    comment_id: int
    action: str  # created / updated / unchanged
    calls: int = 0  # API requests this upsert made


class _Budget:
    """Shared by every copy urllib3 makes of `_Retry`: counter, sleep, clock, cap."""

    def __init__(self, sleep: Callable[[float], None], cap: float, clock: Callable[[], float]):
        self.sleep, self.cap, self.clock = sleep, cap, clock
        self.calls = 0


class _Retry(Retry):
    def __init__(self, *, budget: _Budget, wait: float | None = None, **kw: Any):
        super().__init__(**kw)
        self.budget, self.wait = budget, wait

    def new(self, **kw: Any) -> _Retry:
        return super().new(budget=self.budget, **kw)  # type: ignore[return-value]

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        self.budget.calls += 1  # urllib3 asks this once for every response it receives
        return super().is_retry(method, status_code, has_retry_after)

    def increment(
        self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None
    ):
        wait = None
        if response is not None and response.status in (403, 429):
            wait = self._rate_limit_wait(response.headers)
            if wait is None:  # a plain 403/429: no retry; PyGithub raises with the message
                raise MaxRetryError(_pool, url, "not a rate limit")
            if wait > self.budget.cap:
                response.drain_conn()
                raise GitHubError(
                    f"GitHub rate limit on {method} {url}: it asks to wait {wait:.0f} s, longer "
                    f"than the cap of {self.budget.cap:.0f} s (github.rate-limit-cap); giving up",
                    response.status,
                )
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        retry.wait = wait  # type: ignore[attr-defined]
        return retry

    def _rate_limit_wait(self, headers: Mapping[str, str]) -> float | None:
        after = headers.get("Retry-After")
        if after is not None and after.strip().isdigit():
            return float(after)
        reset = headers.get("x-ratelimit-reset")
        if headers.get("x-ratelimit-remaining") == "0" and reset and reset.isdigit():
            return max(0.0, int(reset) - self.budget.clock()) + 1.0  # +1: reset is whole seconds
        return None

    def sleep(self, response=None) -> None:
        if self.wait is None:  # 5xx or a dropped connection: exponential backoff, 1 s first
            self.wait = min(2.0 ** (len(self.history) - 1), 30.0)
        if self.wait > 0:
            self.budget.sleep(self.wait)


def _retry(budget: _Budget) -> _Retry:
    return _Retry(
        budget=budget,
        total=8,
        connect=3,
        read=1,
        status=5,
        other=0,
        allowed_methods=None,  # POSTs too: a duplicate comment is cleaned up by the sticky logic
        status_forcelist=set(range(500, 600)) | {403, 429},
        raise_on_status=False,
        respect_retry_after_header=True,
    )


def _message(exc: Exception) -> tuple[str, int | None]:
    status = getattr(exc, "status", None)
    data = getattr(exc, "data", None)
    if isinstance(data, dict):
        message = str(data.get("message") or "")
        details = [
            e.get("message") or e.get("code", "")
            for e in data.get("errors") or []
            if isinstance(e, dict)
        ]
        if details:
            message = f"{message}: {'; '.join(str(d) for d in details)}"
        return message or json.dumps(data), status
    return str(data or exc), status


_IDENTITY_CACHE: dict[tuple[str, str], str] = {}  # (api_url, sha256(token)) -> login


class GitHubClient:
    def __init__(
        self,
        repo: str,
        token: str,
        api_url: str = DEFAULT_API_URL,
        *,
        rate_limit_cap: float = 60.0,
        comment_login: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        settle: float = 2.0,
    ):
        from github import Auth, Github

        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo or ""):
            raise GitHubError(f"repository {repo!r}: expected OWNER/NAME (GITHUB_REPOSITORY)")
        if not token:
            raise GitHubError("no GitHub token: set GITHUB_TOKEN or pass --token")
        self.repo_name = repo
        self.api_url = api_url.rstrip("/")
        self.settle = settle  # section mode: how long our section must survive (see _verify)
        self._budget = _Budget(sleep, rate_limit_cap, clock)
        self._gh = Github(
            base_url=self.api_url,
            auth=Auth.Token(token),
            retry=_retry(self._budget),
            per_page=100,
            lazy=True,  # no request until data is needed: the call budget is ours to spend
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self._repo = self._gh.get_repo(repo)  # lazy: no request
        self._key = (self.api_url, hashlib.sha256(token.encode()).hexdigest())
        self._login = comment_login or _IDENTITY_CACHE.get(self._key)

    @property
    def calls(self) -> int:
        return self._budget.calls

    def _call(self, what: str, func: Callable[[], Any], write: bool = False) -> Any:
        from github import GithubException

        try:
            return func()
        except GithubException as exc:
            message, status = _message(exc)
            if write and status == 403 and NOT_ACCESSIBLE in message:
                raise ReadOnlyToken(
                    f"{what}: the token cannot write to {self.repo_name} (GitHub: {message}). "
                    "This is expected on pull requests from forks, where GITHUB_TOKEN is "
                    "read-only. The report is still in the step summary and the results "
                    f"artifact; post it from a workflow_run workflow ({REPORT_WORKFLOW}).",
                    status,
                ) from None
            raise GitHubError(f"{what}: GitHub answered {status}: {message}", status) from None

    # --- reads ---------------------------------------------------------------------------------
    def permission(self, login: str) -> str:
        """admin / write / read / none (GitHub folds maintain into write, triage into read)."""
        try:
            level = self._call(
                f"permission of {login}",
                lambda: self._repo.get_collaborator_permission(login),
            )
        except GitHubError as exc:
            if exc.status == 404:
                return "none"
            raise
        return PERMISSIONS.get(level, "none")

    def pull(self, number: int) -> PullInfo:
        def fetch() -> PullInfo:
            pr = self._repo.get_pull(number)
            raw = pr.raw_data  # one GET; attribute access after this is free
            head_repo = raw["head"].get("repo") or None
            return PullInfo(
                number=raw["number"],
                state=raw["state"],
                draft=bool(raw.get("draft")),
                head_sha=raw["head"]["sha"],
                head_ref=raw["head"]["ref"],
                head_repo=head_repo["full_name"] if head_repo else None,
                base_sha=raw["base"]["sha"],
                base_ref=raw["base"]["ref"],
                labels=[label["name"] for label in raw.get("labels") or []],
                user=(raw.get("user") or {}).get("login", ""),
                fork=bool(head_repo is None or head_repo["full_name"] != self.repo_name),
            )

        return self._call(f"pull request #{number}", fetch)

    def identity(self) -> str:
        """The login our comments are authored by: configured, else GraphQL viewer, else /user."""
        if self._login:
            return self._login
        requester = self._gh.requester
        try:
            _, data = requester.graphql_query("query { viewer { login } }", {})
            login = ((data.get("data") or {}).get("viewer") or {}).get("login")
        except Exception:  # GHES without GraphQL, or a token it refuses: fall back to REST
            login = None
        if not login:
            login = self._call("identity (GET /user)", lambda: self._gh.get_user().login)
        self._login = _IDENTITY_CACHE[self._key] = login
        return login

    # --- writes --------------------------------------------------------------------------------
    def react(self, comment_id: int, content: str) -> None:
        url = f"{self._repo.url}/issues/comments/{comment_id}/reactions"
        self._call(
            f"reaction {content} on comment {comment_id}",
            lambda: self._gh.requester.requestJsonAndCheck("POST", url, input={"content": content}),
            write=True,
        )

    def create_comment(self, number: int, body: str) -> int:
        return self._create(number, fit(body, MAX_BODY)).id

    def _create(self, number: int, body: str):
        issue = self._repo.get_issue(number)
        return self._shrinking(f"comment on #{number}", issue.create_comment, body)

    def _shrinking(self, what: str, send: Callable[[str], Any], body: str) -> Any:
        """Send; on GitHub's 422 "Body is too long (maximum is N characters)" cut and retry once."""
        try:
            return self._call(what, lambda: send(body), write=True)
        except GitHubError as exc:
            if exc.status != 422 or "too long" not in exc.message.lower():
                raise
            found = re.search(r"maximum is (\d+)", exc.message)
            limit = int(found.group(1)) if found else len(body) // 2
            return self._call(what, lambda: send(fit(body, min(limit, len(body) - 1))), write=True)

    def _list_comments(self, number: int) -> list:
        issue = self._repo.get_issue(number)
        return self._call(f"comments of #{number}", lambda: list(issue.get_comments()))

    def _ours(self, number: int, marker: str) -> list:
        me = self.identity()
        return sorted(
            (
                c
                for c in self._list_comments(number)
                if first_line(c.body) == marker and c.user.login == me
            ),
            key=lambda c: (c.created_at, c.id),
        )

    def _edit(self, comment, text: str) -> None:
        self._shrinking(f"edit comment {comment.id}", comment.edit, text)

    def _delete(self, comment) -> None:
        try:
            self._call(f"delete duplicate comment {comment.id}", comment.delete, write=True)
        except GitHubError as exc:
            if exc.status != 404:  # already gone: another reporter cleaned up first
                raise

    def upsert_sticky(
        self, number: int, kind: str, body: str, section: str | None = None
    ) -> StickyResult:
        """Update our `kind` comment on #number in place, or create it.

        Cost with a known identity and <= 100 comments: list + update = 2 calls (1 when the body
        is unchanged); a create is list + create + list = 3, plus one delete per duplicate a
        racing reporter left and one update to merge into the oldest. Sections add two lists,
        `settle` seconds apart, to check ours survived concurrent writers (see `_verify`).
        """
        start = self.calls
        marker = marker_for(kind)
        ours = self._ours(number, marker)
        action, target = "updated", None
        if ours:
            target = ours[0]
            text = merge_body(kind, body, section, [c.body for c in ours])
            if text == target.body and len(ours) == 1:
                return StickyResult(
                    comment_id=target.id, action="unchanged", calls=self.calls - start
                )
            try:
                self._edit(target, text)
            except GitHubError as exc:
                if exc.status != 404:
                    raise
                target = None  # deleted between our list and our edit: create it again
            else:
                for duplicate in ours[1:]:
                    self._delete(duplicate)
        if target is None:
            action = "created"
            target = self._create(number, merge_body(kind, body, section, []))
            target = self._settle(number, kind, body, section, target.id)
        if section is not None:
            self._verify(number, kind, body, section)
        return StickyResult(comment_id=target.id, action=action, calls=self.calls - start)

    def _settle(self, number: int, kind: str, body: str, section: str | None, mine: int):
        """After a create: keep the oldest of ours, delete the rest, re-apply our body to it."""
        ours = self._ours(number, marker_for(kind))
        if not ours:
            raise GitHubError(f"comment {mine} on #{number} vanished right after it was created")
        survivor = ours[0]
        for duplicate in ours[1:]:
            self._delete(duplicate)
        if survivor.id != mine:
            text = merge_body(kind, body, section, [c.body for c in ours])
            if text != survivor.body:
                self._edit(survivor, text)
        return survivor

    def _verify(self, number: int, kind: str, body: str, section: str) -> None:
        """Read back until our section has stayed in the one surviving comment for `settle` s.

        The REST API has no compare-and-swap for comments: a writer that read before our write
        can still overwrite it. Such in-flight writes land within a request's latency, so a
        section seen twice, `settle` seconds apart, has survived them.
        """
        want = fit_section(body)
        seen = False
        for attempt in range(12):
            if seen:
                self._budget.sleep(self.settle)
            elif attempt:  # writers collided: back off by a random amount so one of them wins
                self._budget.sleep(random.uniform(0, min(0.05 * 2**attempt, 2.0)))
            ours = self._ours(number, marker_for(kind))
            if ours and len(ours) == 1:
                found = parse_sections(kind, ours[0].body).get(section)
                if found == want or (found is None and CUT_NOTE[:20] in ours[0].body):
                    if seen:
                        return  # ours is there (or was cut away by the length limit)
                    seen = True
                    continue
            seen = False
            if not ours:
                self._create(number, merge_body(kind, body, section, []))
                continue
            for duplicate in ours[1:]:
                self._delete(duplicate)
            self._edit(ours[0], merge_body(kind, body, section, [c.body for c in ours]))
        raise GitHubError(
            f"section {section!r} of the {kind} comment on #{number} kept being overwritten"
        )


# --- from the environment ---------------------------------------------------------------------
def client_from_env(
    env: Mapping[str, str] = os.environ, token: str | None = None, config=None, **kw: Any
) -> GitHubClient:
    """A client for GITHUB_REPOSITORY at GITHUB_API_URL with --token or GITHUB_TOKEN; our login
    from `[github] comment-login`, else CI_BUDGET_COMMENT_LOGIN, else asked of GitHub once."""
    settings = getattr(config, "github", None)
    repo = env.get("GITHUB_REPOSITORY", "")
    if not repo:
        raise GitHubError("GITHUB_REPOSITORY is not set (expected OWNER/NAME)")
    return GitHubClient(
        repo,
        token or env.get("GITHUB_TOKEN", ""),
        env.get("GITHUB_API_URL") or DEFAULT_API_URL,
        rate_limit_cap=settings.rate_limit_cap if settings else 60.0,
        # The composite action says when the token is the workflow's own GITHUB_TOKEN, whose
        # comments are github-actions[bot]'s: knowing that saves the identity lookup.
        comment_login=(settings.comment_login if settings else None)
        or env.get("CI_BUDGET_COMMENT_LOGIN")
        or None,
        **kw,
    )


def pr_from_event(env: Mapping[str, str] = os.environ) -> int:
    """The pull request number of the event in GITHUB_EVENT_PATH, or a GitHubError saying why not."""
    path = env.get("GITHUB_EVENT_PATH")
    name = env.get("GITHUB_EVENT_NAME", "event")
    if not path:
        raise GitHubError("no pull request: pass --pr N (GITHUB_EVENT_PATH is not set)")
    try:
        with open(path, encoding="utf-8") as fh:
            event = json.load(fh)
    except (OSError, ValueError) as exc:
        raise GitHubError(f"{path}: cannot read the {name} payload: {exc}") from None
    if isinstance(event.get("pull_request"), dict) and "number" in event["pull_request"]:
        return int(event["pull_request"]["number"])
    issue = event.get("issue")
    if isinstance(issue, dict) and "number" in issue:
        if not issue.get("pull_request"):
            raise GitHubError(f"{path}: {name}: issue #{issue['number']} is not a pull request")
        return int(issue["number"])
    run = event.get("workflow_run")
    if isinstance(run, dict):
        pulls = run.get("pull_requests") or []
        if pulls:
            return int(pulls[0]["number"])
        raise GitHubError(
            f"{path}: {name}: workflow_run.pull_requests is empty (a fork PR, or not a PR run); "
            "pass --pr N"
        )
    raise GitHubError(
        f"{path}: {name}: no pull_request, issue or workflow_run in the payload; pass --pr N"
    )


def post_report(
    markdown: str,
    *,
    kind: str,
    pr: int | None = None,
    token: str | None = None,
    config=None,
    env: Mapping[str, str] = os.environ,
    section: str | None = None,
    client: GitHubClient | None = None,
    stream=None,
) -> StickyResult:
    """Upsert the `kind` sticky comment on the PR (`pr`, else the event's) and say what happened."""
    number = pr if pr is not None else pr_from_event(env)
    client = client or client_from_env(env, token=token, config=config)
    result = client.upsert_sticky(number, kind, markdown, section=section)
    where = f"{client.repo_name}#{number}"
    print(
        f"ci-budget: {result.action} the {kind} comment {result.comment_id} on {where} "
        f"({result.calls} API calls)",
        file=stream or sys.stdout,
    )
    return result
