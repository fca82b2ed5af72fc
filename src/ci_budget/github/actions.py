"""The Actions runner (edge): what a job gets (its environment, the event payload) and what it
gives back (outputs, step summary, workflow commands in the log, annotations).

`runner_env` is the one place ci-budget reads the GitHub and runner variables. Works the same in
an Actions job and a shell: every variable is optional here, and whoever uses the result decides
what a missing one means. Every writer is no-op-safe: when the variable is unset (a local shell)
it does nothing.

The runner reads every line a step prints (lines end at `\n`, `\r` or `\r\n`) and treats one
that starts, after blanks, with `::`, or holds `##[` anywhere, as a workflow command: a fake
annotation, `add-mask`, `stop-commands`. Text from data reaches the log only through
`render.escape.log_text` (or `print_report`), and annotation values are escaped as GitHub's
toolkit escapes them, after the same escaping layer.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ci_budget.render.escape import log_text, visible

# --- what a job gets: the environment and the event payload ----------------------------------

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


# --- what a job gives back: outputs, step summary, log commands -------------------------------

SUMMARY_LIMIT = 1024 * 1024  # GitHub rejects step summaries over 1 MiB


def _escape_data(value: str) -> str:
    """As `escapeData` in @actions/core (`%`, `\r`, `\n`), bidi and invisible code points shown.
    The line is a command already (`::level ...::`), so the runner reads no other in it."""
    return visible(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    """As `escapeProperty` in @actions/core: also `:` and `,`."""
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def print_report(text: str, out: TextIO, fence: bool) -> None:
    """Print a report whose text comes partly from data. Lines are defused by `log_text`; with
    `fence` (in Actions) the whole is also fenced by `::stop-commands::TOKEN` ... `::TOKEN::`
    (a random token), so the runner reads no command in it at all. JSON needs no fence: its
    strings cannot hold a line break, so no line of it starts with `::` or `##[`."""
    text = log_text(text)
    text = text if text.endswith("\n") else text + "\n"
    if fence:
        token = secrets.token_hex(16)
        text = f"::stop-commands::{token}\n{text}::{token}::\n"
    out.write(text)
    out.flush()


def set_outputs(values: Mapping[str, object], env: Mapping[str, str]) -> bool:
    """Append outputs to $GITHUB_OUTPUT with a random heredoc delimiter (multi-line safe)."""
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return False
    with open(target, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            text = _stringify(value)
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            while delimiter in text:  # pragma: no cover - astronomically unlikely
                delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            fh.write(f"{key}<<{delimiter}\n{text}\n{delimiter}\n")
    return True


def _stringify(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def append_summary(markdown: str, env: Mapping[str, str]) -> bool:
    """Append to $GITHUB_STEP_SUMMARY, cut to GitHub's 1 MiB limit with a note."""
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    path = Path(target)
    used = path.stat().st_size if path.exists() else 0
    room = SUMMARY_LIMIT - used
    data = markdown.encode("utf-8")
    if len(data) > room:
        note = b"\n\n_(step summary cut at GitHub's 1 MiB limit; the full report is in the artifact)_\n"
        keep = max(0, room - len(note))
        data = data[:keep].decode("utf-8", errors="ignore").encode("utf-8") + note
        if len(data) > room:
            return False
    with path.open("ab") as fh:
        fh.write(data)
    return True


def annotation(
    level: str,
    message: str,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """`::warning file=…,line=…,title=…::message` (level: notice, warning, error)."""
    props = []
    if file:
        props.append(f"file={_escape_property(file)}")
    if line:
        props.append(f"line={int(line)}")
    if title:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{_escape_data(message)}"
