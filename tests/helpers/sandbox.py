"""Whether this machine can start the tests' sandbox (bubblewrap), for tests that need it."""

from __future__ import annotations

import functools
import os
import sys

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
