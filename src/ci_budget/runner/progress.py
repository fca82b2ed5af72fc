"""Live per-file progress on a terminal: one line redrawn in place, elapsed against est_time.

In CI (output not a terminal) nothing here draws: the runner prints plain lines and the test
output as before, which is what a log wants. On a terminal the test output goes to the file's
log only, and a file that does not pass gets the tail of its log printed after it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import TextIO

from ci_budget.results.phases import split_nodeid

BAR = 20
TAIL_LINES = 30


def is_live(stream: TextIO) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM") != "dumb"


def current_test(tail: bytes) -> str:
    """The node id of the test that started last, from the tail of the progress file the
    runner's plugin writes (read by `datafiles.tail`), or ""."""
    try:
        last = tail.splitlines()[-1:]
        name = json.loads(last[0]).get("nodeid", "") if last else ""
        return name if isinstance(name, str) else ""
    except (ValueError, IndexError, AttributeError, RecursionError):
        return ""


def line(tag: str, path: str, elapsed: float, est: float, test: str, width: int = 0) -> str:
    ratio = elapsed / est if est > 0 else 0.0
    filled = min(BAR, int(ratio * BAR))
    bar = "█" * filled + "░" * (BAR - filled)
    over = " OVER" if ratio > 1 else ""
    text = f"{tag} {bar} {elapsed:5.0f}s / {est:.0f}s ({ratio * 100:3.0f}%){over}  {path}"
    name = split_nodeid(test)[2] if test else ""
    if name:
        text += f" · {name}"
    width = width or shutil.get_terminal_size((120, 24)).columns
    return text[: max(20, width - 1)]  # one screen line, or \r cannot redraw it


class LiveLine:
    """Redraws one status line at most every `every` seconds; `clear` before other output."""

    def __init__(self, stream: TextIO, every: float = 0.5):
        self.stream = stream
        self.every = every
        self._shown = False
        self._last = 0.0

    def show(self, text: str) -> None:
        now = time.monotonic()
        if now - self._last < self.every:
            return
        self._last = now
        self.stream.write("\r\033[K" + text)
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False


def log_tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return text.rstrip("\n").splitlines()[-lines:]
