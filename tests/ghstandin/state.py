"""What the stand-in remembers: identities, repositories, issues/PRs, comments, faults, calls."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
NOT_ACCESSIBLE = "Resource not accessible by integration"


@dataclass
class Identity:
    login: str
    id: int
    type: str = "User"  # "Bot" for an app installation
    installation: bool = False  # GET /user answers 403, like GITHUB_TOKEN
    read_only: bool = False  # writes answer 403, like GITHUB_TOKEN on a fork PR


@dataclass
class Comment:
    id: int
    issue: int
    login: str
    user_id: int
    user_type: str
    body: str
    created_at: str
    updated_at: str
    reactions: list[list[str]] = field(default_factory=list)  # [login, content]


@dataclass
class Issue:
    number: int
    user: str = "octocat"
    title: str = "A change"
    body: str = ""
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    pull: bool = True
    draft: bool = False
    head_sha: str = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    head_ref: str = "feature"
    head_repo: str | None = None  # None: same repository; a fork's full name otherwise
    base_sha: str = "9fceb02d0ae598e95dc970b74764b1a7da2e9c1f"
    base_ref: str = "main"
    files: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)  # the PR's commits, oldest first
    head_pushed_at: str | None = None  # the head repository's last push (None: the example's)
    # new-file line ranges of the PR's diff hunks, per path: review comments must land in them
    hunks: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


@dataclass
class Fault:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RateWindow:
    """x-ratelimit-* headers on every API answer; 0 left answers 403 like GitHub."""

    limit: int = 5000
    remaining: int = 5000
    reset: int = 2_000_000_000


@dataclass
class State:
    repo: str = "octo-org/hello-gpu"
    identities: dict[str, Identity] = field(default_factory=dict)  # token -> identity
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # login -> admin/maintain/write/triage/read
    users: set[str] = field(default_factory=set)  # known logins without a role ("none")
    max_body: int = 65536
    faults: dict[str, deque[Fault]] = field(default_factory=dict)  # operationId -> queue
    calls: list[dict[str, Any]] = field(default_factory=list)  # every API request, in order
    invalid: list[str] = field(default_factory=list)  # requests GitHub's description rejects
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    rate: RateWindow | None = None
    contents: dict[tuple[str, str], str] = field(default_factory=dict)  # (ref, path) -> text
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    tick: int = 0
    next_id: int = 1_000_000
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def now(self) -> str:
        """A fake clock that advances one second per write, so created_at orders comments."""
        self.tick += 1
        return (EPOCH + timedelta(seconds=self.tick)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def add_comment(self, issue: int, who: Identity, body: str) -> Comment:
        stamp = self.now()
        comment = Comment(self.new_id(), issue, who.login, who.id, who.type, body, stamp, stamp)
        self.comments[comment.id] = comment
        return comment

    def issue_comments(self, issue: int) -> list[Comment]:
        return sorted((c for c in self.comments.values() if c.issue == issue), key=lambda c: c.id)

    def to_json(self) -> dict[str, Any]:
        with self.lock:
            return {
                "repo": self.repo,
                "issues": {n: asdict(i) for n, i in self.issues.items()},
                "comments": [asdict(c) for c in self.comments.values()],
                "roles": dict(self.roles),
                "calls": list(self.calls),
                "call_count": len(self.calls),
                "invalid": list(self.invalid),
                "check_runs": list(self.check_runs.values()),
                "dispatches": list(self.dispatches),
            }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> State:
        """Seed state from a JSON file (standalone mode): repo, identities, issues, roles, users,
        comments."""
        state = cls(repo=data.get("repo", cls.repo))
        for token, ident in data.get("identities", {}).items():
            state.identities[token] = Identity(**ident)
        for issue in data.get("issues", []):
            state.issues[int(issue["number"])] = Issue(**issue)
        state.roles.update(data.get("roles", {}))
        state.users.update(data.get("users", []))
        state.max_body = int(data.get("max_body", state.max_body))
        for c in data.get("comments", []):
            who = Identity(c["login"], int(c.get("user_id", 1)), c.get("user_type", "User"))
            state.add_comment(int(c["issue"]), who, c["body"])
        return state
