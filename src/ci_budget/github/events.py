"""The runner environment and the event payload (an edge: reads environment and files).

`runner_env` is the one place ci-budget reads the GitHub and runner variables. Works the same in
an Actions job and a shell: every variable is optional here, and whoever uses the result decides
what a missing one means.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_EVENT_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB

# Everything ci-budget reads from its environment (the tests' own environment is the runner's).
VARIABLES = (
    "GITHUB_ACTIONS",
    "GITHUB_API_URL",
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_REPOSITORY",
    "GITHUB_REF",
    "GITHUB_RUN_ID",
    "GITHUB_SERVER_URL",
    "GITHUB_SHA",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_TOKEN",
    "CI_BUDGET_COMMENT_LOGIN",
    "RUNNER_LABELS",
)


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
    runner_labels: str | None = None
    # The variables as read, for the writers that take an environment mapping (outputs, step
    # summary, the GitHub client); it holds the token, so it is never shown either.
    values: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def run_url(self) -> str | None:
        if self.repository and self.run_id:
            return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return None

    @property
    def in_actions(self) -> bool:
        return self.values.get("GITHUB_ACTIONS") == "true"

    def with_token(self, token: str | None) -> RunnerEnv:
        """The same environment with `token` (a --token argument) in place of GITHUB_TOKEN."""
        if not token:
            return self
        values = dict(self.values, GITHUB_TOKEN=token)
        return RunnerEnv(**{**self.__dict__, "token": token, "values": values})


def runner_env(env: Mapping[str, str] | None = None) -> RunnerEnv:
    env = os.environ if env is None else env
    values = {name: env[name] for name in VARIABLES if env.get(name)}

    def get(name: str) -> str | None:
        return values.get(name) or None

    return RunnerEnv(
        event_name=get("GITHUB_EVENT_NAME"),
        event_path=get("GITHUB_EVENT_PATH"),
        repository=get("GITHUB_REPOSITORY"),
        api_url=(get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        server_url=(get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        sha=get("GITHUB_SHA"),
        run_id=get("GITHUB_RUN_ID"),
        token=get("GITHUB_TOKEN"),
        runner_labels=get("RUNNER_LABELS"),
        values=values,
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
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise EventError(f"{name}: {path} is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise EventError(f"{name}: {path} holds a JSON {type(payload).__name__}, not an object")
    return payload


def pr_number(event_name: str | None, payload: Mapping[str, Any], path: str) -> int:
    """The pull request an event is about, or EventError saying why there is none."""
    name = event_name or "event"
    pull = payload.get("pull_request")
    if isinstance(pull, dict) and "number" in pull:
        return int(pull["number"])
    issue = payload.get("issue")
    if isinstance(issue, dict) and "number" in issue:
        if not issue.get("pull_request"):
            raise EventError(f"{path}: {name}: issue #{issue['number']} is not a pull request")
        return int(issue["number"])
    run = payload.get("workflow_run")
    if isinstance(run, dict):
        pulls = run.get("pull_requests") or []
        if pulls:
            return int(pulls[0]["number"])
        raise EventError(
            f"{path}: {name}: workflow_run.pull_requests is empty (a fork PR, or not a PR run); "
            "pass --pr N"
        )
    raise EventError(
        f"{path}: {name}: no pull_request, issue or workflow_run in the payload; pass --pr N"
    )
