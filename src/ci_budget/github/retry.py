"""Every request's retry policy (edge): one urllib3 `Retry` that counts responses, retries 5xx
with backoff, waits out rate limits (Retry-After / x-ratelimit-reset) up to a cap through an
injectable `sleep`, and lets every other 4xx through at once so PyGithub raises with GitHub's
message. Also the errors the client raises."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

from ci_budget.models import secs

NOT_ACCESSIBLE = "Resource not accessible by integration"


class GitHubError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status


class ReadOnlyToken(GitHubError):
    """The token may read but not write: GITHUB_TOKEN on a pull request from a fork."""


class Budget:
    """Shared by every copy urllib3 makes of `_Retry`: counter, sleep, clock, cap."""

    def __init__(self, sleep: Callable[[float], None], cap: float, clock: Callable[[], float]):
        self.sleep, self.cap, self.clock = sleep, cap, clock
        self.calls = 0


class _Retry(Retry):
    def __init__(self, *, budget: Budget, wait: float | None = None, **kw: Any):
        super().__init__(**kw)
        self.budget, self.wait = budget, wait

    def new(self, **kw: Any) -> _Retry:
        return super().new(budget=self.budget, **kw)

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
                raise MaxRetryError(_pool, url, ResponseError("not a rate limit"))
            if wait > self.budget.cap:
                response.drain_conn()
                raise GitHubError(
                    f"GitHub rate limit on {method} {url}: it asks to wait {secs(wait)}, longer "
                    f"than the cap of {secs(self.budget.cap)} (github.rate-limit-cap); giving up",
                    response.status,
                )
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        retry.wait = wait
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


def make_retry(budget: Budget) -> _Retry:
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


def error_message(exc: Exception) -> tuple[str, int | None]:
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
