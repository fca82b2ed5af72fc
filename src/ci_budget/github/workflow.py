"""GitHub Actions workflow commands and environment files (outputs, step summary, annotations).

Every writer here is no-op-safe: when the variable is unset (a local shell) it does nothing.

The runner reads every line a step prints (lines end at `\n`, `\r` or `\r\n`) and treats one
that starts, after blanks, with `::`, or holds `##[` anywhere, as a workflow command: a fake
annotation, `add-mask`, `stop-commands`. Text from data reaches the log only through
`render.escape.log_text` (or `print_report`), and annotation values are escaped as GitHub's
toolkit escapes them, after the same escaping layer.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from ci_budget.render.escape import log_text, visible

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
