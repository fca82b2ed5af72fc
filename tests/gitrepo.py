"""`git` for tests that build repositories: a fixed identity, so commits work on any machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout, stripped. Raises on a non-zero exit."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env={**os.environ, **IDENTITY},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()
