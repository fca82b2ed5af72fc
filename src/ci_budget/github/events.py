"""The runner environment and the event payload (an edge: reads environment and files).

Works the same in an Actions job and a shell: every variable is optional here, and whoever uses
the result decides what a missing one means.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_EVENT_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB


@dataclass
class RunnerEnv:
    event_name: str | None = None
    event_path: str | None = None
    repository: str | None = None  # owner/name
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    sha: str | None = None
    run_id: str | None = None
    token: str | None = field(default=None, repr=False)  # never in a repr, a log or a message

    @property
    def run_url(self) -> str | None:
        if self.repository and self.run_id:
            return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return None


def runner_env(env: Mapping[str, str] | None = None) -> RunnerEnv:
    env = os.environ if env is None else env

    def get(name: str) -> str | None:
        return env.get(name) or None

    return RunnerEnv(
        event_name=get("GITHUB_EVENT_NAME"),
        event_path=get("GITHUB_EVENT_PATH"),
        repository=get("GITHUB_REPOSITORY"),
        api_url=(get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        server_url=(get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        sha=get("GITHUB_SHA"),
        run_id=get("GITHUB_RUN_ID"),
        token=get("GITHUB_TOKEN"),
    )


class EventError(Exception):
    """The payload cannot be read; the message names the event and the file."""


def load_payload(event_name: str | None, path: str | None) -> dict[str, Any]:
    """The event payload as a dict, or EventError saying what is wrong with it."""
    name = event_name or "event"
    if not path:
        raise EventError(f"{name}: GITHUB_EVENT_PATH is not set")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_EVENT_BYTES + 1)
    except OSError as exc:
        raise EventError(f"{name}: cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_EVENT_BYTES:
        raise EventError(f"{name}: {path} is larger than {MAX_EVENT_BYTES} bytes")
    try:
        payload = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EventError(f"{name}: {path} is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise EventError(f"{name}: {path} holds a JSON {type(payload).__name__}, not an object")
    return payload
