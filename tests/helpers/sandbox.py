"""Whether this machine can start the tests' sandbox (bubblewrap), for tests that need it."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_budget.runner.sandbox import SandboxError, SandboxPolicy, open_sandbox


@functools.lru_cache(maxsize=1)
def why_not() -> str | None:
    """None when the sandbox starts here, else its one-line reason."""
    try:
        box = open_sandbox(SandboxPolicy("on"), sys.executable, os.getcwd(), dict(os.environ), True)
    except SandboxError as exc:
        return str(exc)
    if box is not None:
        box.close()
    return None


def sandbox_or_skip() -> None:
    """Skip with the reason where bwrap is missing or the kernel forbids its namespaces; fail
    instead under .ci/run, which installs bubblewrap and sets CI_BUDGET_REQUIRE_SANDBOX."""
    why = why_not()
    if why is None:
        return
    if os.environ.get("CI_BUDGET_REQUIRE_SANDBOX"):
        pytest.fail(f"the tests' sandbox is required here: {why}")
    pytest.skip(f"the tests' sandbox cannot start on this machine: {why}")


def as_user(uid: int, owned: Path, shown: set[str]) -> list[str]:
    """A command prefix (this process is root) that runs as uid/gid `uid`, owning `owned`, in a
    view where `shown` (this checkout of ci-budget, its venv and interpreter, which may sit
    under /root, 0700) can be read: what a runner installed as that user sees."""
    subprocess.run(["chown", "-R", f"{uid}:{uid}", str(owned)], check=True)
    shown = shown | {sys.prefix, os.path.realpath(sys.base_prefix), str(owned)}
    args = ["bwrap", "--dev-bind", "/", "/"]
    hidden = set()
    for path in sorted(shown):
        for parent in Path(path).parents:
            if parent != Path("/") and not os.stat(parent).st_mode & 0o001:
                hidden.add(str(parent))
    for path in sorted(hidden, key=len):
        args += ["--tmpfs", path]
    for path in sorted(shown, key=len):
        args += ["--perms", "0755", "--dir", path, "--bind", path, path]
    return [*args, "--", "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
