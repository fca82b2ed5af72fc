"""Talking to GitHub (edge): a PyGithub client with bounded, counted retries (`retry`).

Reads (permission, pull request, its commits, ci-budget's earlier refusals, a file at a commit),
writes (reactions, comments, label removal, review comments on lines of a pull request) and the
pieces the sticky-comment protocol (`sticky`) is built from. The token is only ever handed to
PyGithub; nothing here prints it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from ci_budget.github.retry import (
    NOT_ACCESSIBLE,
    Budget,
    GitHubError,
    ReadOnlyToken,
    error_message,
    make_retry,
)
from ci_budget.render.blocks import first_line, fit, marker_for
from ci_budget.trigger.authz import REFUSED

DEFAULT_API_URL = "https://api.github.com"
PERMISSIONS = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read"}
PERMISSIONS |= {"read": "read", "none": "none"}
# trigger.comment's marker of a remembered refusal, `marker_for("refused-LOGIN")`: LOGIN found
_HEAD, _TAIL = marker_for(REFUSED + "LOGIN").split("LOGIN")
_REFUSED = re.compile(re.escape(_HEAD) + r"([\w.-]+)" + re.escape(_TAIL))


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
    head_pushed_at: str | None = None  # server time of the head repository's last push


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
    ):
        from github import Auth, Github

        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo or ""):
            raise GitHubError(f"repository {repo!r}: expected OWNER/NAME (GITHUB_REPOSITORY)")
        if not token:
            raise GitHubError("no GitHub token: set GITHUB_TOKEN or pass --token")
        self.repo_name = repo
        self.api_url = api_url.rstrip("/")
        self._budget = Budget(sleep, rate_limit_cap, clock)
        self._gh = Github(
            base_url=self.api_url,
            auth=Auth.Token(token),
            retry=make_retry(self._budget),
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

    @property
    def requester(self):
        """PyGithub's requester, for REST calls PyGithub has no method for; same retry budget."""
        return self._gh.requester

    def _call(self, what: str, func: Callable[[], Any], write: bool = False) -> Any:
        from github import GithubException

        try:
            return func()
        except GithubException as exc:
            message, status = error_message(exc)
            if write and status == 403 and NOT_ACCESSIBLE in message:
                raise ReadOnlyToken(
                    f"{what}: the token cannot write to {self.repo_name} (GitHub: {message}). "
                    "This is expected on pull requests from forks, where GITHUB_TOKEN is "
                    "read-only. The report is still in the step summary and the results "
                    "artifact; post from a base-branch event instead (pull_request_target, "
                    "issue_comment; docs/security.md).",
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
                head_pushed_at=head_repo.get("pushed_at") if head_repo else None,
            )

        return self._call(f"pull request #{number}", fetch)

    def pull_for_head(self, head_repo: str, head_branch: str, head_sha: str) -> int | None:
        """The open pull request whose head is exactly `head_sha` on `head_repo`'s
        `head_branch` (a fork's too: GitHub lists them by `head=OWNER:BRANCH`), or None."""
        owner = head_repo.split("/")[0]

        def fetch() -> int | None:
            for pr in self._repo.get_pulls(state="open", head=f"{owner}:{head_branch}"):
                raw = pr.raw_data
                repo = (raw["head"].get("repo") or {}).get("full_name")
                if raw["head"]["sha"] == head_sha and repo == head_repo:
                    return int(raw["number"])
            return None

        return self._call(f"pull requests with head {owner}:{head_branch}", fetch)

    def pull_commits(self, number: int) -> list[str]:
        """The SHAs of the PR's commits (GitHub lists at most 250)."""

        def fetch() -> list[str]:
            return [c.sha for c in self._repo.get_pull(number).get_commits()]

        return self._call(f"commits of #{number}", fetch)

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

    def file_text(self, path: str, ref: str) -> str:
        """The text of `path` at `ref` (`repos/get-content`)."""
        url = f"{self.api_url}/repos/{self.repo_name}/contents/{quote(path)}"

        def fetch():
            _, data = self.requester.requestJsonAndCheck("GET", url, parameters={"ref": ref})
            return data

        data = self._call(f"{path} at {ref[:12]}", fetch)
        if not isinstance(data, dict) or data.get("type") != "file" or "content" not in data:
            raise GitHubError(f"{path} at {ref[:12]}: not a file")
        return base64.b64decode(data["content"]).decode("utf-8")

    # --- writes --------------------------------------------------------------------------------
    def react(self, comment_id: int, content: str) -> None:
        url = f"{self._repo.url}/issues/comments/{comment_id}/reactions"
        self._call(
            f"reaction {content} on comment {comment_id}",
            lambda: self._gh.requester.requestJsonAndCheck("POST", url, input={"content": content}),
            write=True,
        )

    def remove_label(self, number: int, name: str) -> None:
        issue = self._repo.get_issue(number)
        self._call(f"remove label {name!r} from #{number}", lambda: issue.remove_from_labels(name),
                   write=True)  # fmt: skip

    def create_comment(self, number: int, body: str) -> int:
        issue = self._repo.get_issue(number)
        return self._shrinking(f"comment on #{number}", issue.create_comment, fit(body)).id

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

    def sleep(self, seconds: float) -> None:
        self._budget.sleep(seconds)

    def list_comments(self, number: int) -> list:
        issue = self._repo.get_issue(number)
        return self._call(f"comments of #{number}", lambda: list(issue.get_comments()))

    def ours(self, number: int, marker: str) -> list:
        """Our comments on #number whose first line is `marker`, oldest first."""
        me = self.identity()
        return sorted(
            (
                c
                for c in self.list_comments(number)
                if first_line(c.body) == marker and c.user.login == me
            ),
            key=lambda c: (c.created_at, c.id),
        )

    def refused_logins(self, number: int, page: int) -> set[str]:
        """The logins (lower case) our own refusal replies name, on page `page` of 100 of the
        comments of #number (one request; the caller picks the page of the newest)."""
        me = self.identity()
        issue = self._repo.get_issue(number)
        comments = self._call(
            f"comments of #{number}", lambda: issue.get_comments().get_page(max(page, 1) - 1)
        )
        found = set()
        for c in comments:
            hit = _REFUSED.fullmatch(first_line(c.body))
            if hit and c.user is not None and c.user.login == me:
                found.add(hit.group(1).lower())
        return found

    def review_comment(self, number: int, commit: str, path: str, start: int, end: int,
                       body: str) -> int:  # fmt: skip
        """A comment on lines start..end (new side) of `path` in pull request `number`; its id
        (`pulls/create-review-comment`). GitHub answers 422 when the lines are not part of the
        pull request's diff."""
        url = f"{self.api_url}/repos/{self.repo_name}/pulls/{number}/comments"
        payload = {"body": body, "commit_id": commit, "path": path, "line": end, "side": "RIGHT"}
        if start < end:
            payload |= {"start_line": start, "start_side": "RIGHT"}

        def send():
            _, data = self.requester.requestJsonAndCheck("POST", url, input=payload)
            return data

        data = self._call(f"review comment on {path}:{start}-{end}", send, write=True)
        return int(data["id"])

    def edit(self, comment, text: str) -> None:
        self._shrinking(f"edit comment {comment.id}", comment.edit, text)

    # --- pull requests from a branch of this repository (the est_time PR) ------------------------
    def open_pull_from(self, branch: str, base: str):
        """The open pull request from this repository's own `branch` (ci-budget's, which it
        force-pushes) into `base`, or None; a fork's branch of the same name is not it."""
        owner = self.repo_name.split("/")[0]

        def fetch():
            for pr in self._repo.get_pulls(state="open", head=f"{owner}:{branch}", base=base):
                raw = pr.raw_data["head"]
                if (
                    raw["ref"] == branch
                    and (raw.get("repo") or {}).get("full_name") == self.repo_name
                ):
                    return pr
            return None

        return self._call(f"pull requests from {owner}:{branch}", fetch)

    def create_pull(self, branch: str, base: str, title: str, body: str) -> int:
        def send(text: str):
            return self._repo.create_pull(title=title, body=text, head=branch, base=base)

        return self._shrinking(f"pull request from {branch}", send, fit(body)).number

    def edit_pull(self, pr, body: str) -> None:
        self._shrinking(f"edit pull request #{pr.number}", lambda text: pr.edit(body=text), body)

    # --- issues (the watch's one tracking issue) ------------------------------------------------
    def our_issues(self, label: str, marker: str) -> list:
        """Our open issues labelled `label` whose body's first line is `marker`, oldest first
        (pull requests, which GitHub lists as issues too, left out)."""
        me = self.identity()

        def fetch() -> list:
            found = self._repo.get_issues(state="open", labels=[label])
            return [
                i
                for i in found
                if i.pull_request is None and i.user.login == me and first_line(i.body) == marker
            ]

        return sorted(self._call(f"open issues labelled {label!r}", fetch), key=lambda i: i.number)

    def create_issue(self, title: str, body: str, label: str) -> int:
        def send(text: str):
            return self._repo.create_issue(title=title, body=text, labels=[label])

        return self._shrinking(f"issue {title!r}", send, fit(body)).number

    def edit_issue(self, issue, body: str) -> None:
        self._shrinking(f"edit issue #{issue.number}", lambda text: issue.edit(body=text), body)

    def delete(self, comment) -> None:
        try:
            self._call(f"delete duplicate comment {comment.id}", comment.delete, write=True)
        except GitHubError as exc:
            if exc.status != 404:  # already gone: another reporter cleaned up first
                raise


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
