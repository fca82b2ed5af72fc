"""GitHub Actions workflow commands and environment files (outputs, step summary, annotations).

Every function here is a no-op-safe writer: when the variable is unset (a local shell) it does
nothing or prints where a human reads it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

SUMMARY_LIMIT = 1024 * 1024  # GitHub rejects step summaries over 1 MiB


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def set_outputs(values: Mapping[str, object], env: Mapping[str, str] | None = None) -> bool:
    """Append outputs to $GITHUB_OUTPUT with a random heredoc delimiter (multi-line safe)."""
    env = os.environ if env is None else env
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


def append_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Append to $GITHUB_STEP_SUMMARY, cut to GitHub's 1 MiB limit with a note."""
    env = os.environ if env is None else env
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


def in_actions(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get("GITHUB_ACTIONS") == "true"
