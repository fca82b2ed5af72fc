"""Whether a failed file runs again (`run --enable-retry`, as run_suite.py's). Pure.

A timeout is retried (a stuck server or device, usually). A failure is retried when its output
matches an infra pattern; else not when it matches a pattern of a real code error; else when it
matches a retriable pattern or shows an AssertionError. Patterns are regular expressions,
searched case-insensitively; `AssertionError` is matched as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class RetryRules:
    max_attempts: int = 2
    wait: float = 60.0
    infra: list[str] = field(default_factory=list)
    never: list[str] = field(default_factory=list)
    retriable: list[str] = field(default_factory=list)


def _first(patterns: list[str], text: str) -> str | None:
    for pattern in patterns:
        try:
            if re.search(pattern, text, re.IGNORECASE):
                return pattern
        except re.error:
            continue  # a repository's bad pattern matches nothing
    return None


def retry_reason(rules: RetryRules, status: str, output: str) -> str | None:
    """Why a file with this status and output runs again, or None."""
    if status == "passed":
        return None
    if status == "timeout":
        return "timed out"
    if status not in ("failed", "crashed"):
        return None  # cancelled, or not run
    if hit := _first(rules.infra, output):
        return f"infra pattern {hit!r}"
    if _first(rules.never, output):
        return None
    if hit := _first(rules.retriable, output):
        return f"retriable pattern {hit!r}"
    if "AssertionError" in output:
        return "AssertionError"
    return None
