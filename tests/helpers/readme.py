"""The README's two commands, as the tests that hold them to their word read them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
FIRST_SCREEN = 30  # lines: what a reader sees of the rendered README before scrolling


def bash_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, body) of each ```bash block."""
    return [
        (text[: m.start()].count("\n") + 1, m["body"])
        for m in re.finditer(r"^```bash\n(?P<body>.*?)^```$", text, re.M | re.S)
    ]


def two_commands(text: str | None = None) -> tuple[str, str]:
    """The demo command and the test command: the first two bash blocks."""
    blocks = bash_blocks(README.read_text(encoding="utf-8") if text is None else text)
    demo, test = (body.strip() for _, body in blocks[:2])
    return demo, test


def demo_args() -> tuple[list[str], list[str]]:
    """The arguments the demo gives `ci-budget run` and `ci-budget report`."""
    demo, _ = two_commands()
    calls = [shlex.split(part) for part in re.split(r"&&|;", demo)]
    run = next(c for c in calls if c[:2] == [".venv/bin/ci-budget", "run"])
    report = next(c for c in calls if c[:2] == [".venv/bin/ci-budget", "report"])
    return run[1:], report[1:]
