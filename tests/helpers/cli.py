"""`ci-budget` in a process of its own, for tests where the process is the point (exit status,
stdout/stderr, files written)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def cli(
    *args: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
    drop: tuple[str, ...] = ("GITHUB_",),
) -> subprocess.CompletedProcess:
    """`python -m ci_budget.cli ARGS` as a user runs it: outside a GitHub job (no variable
    named with a prefix in `drop` but those `env` sets), output captured as text."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
