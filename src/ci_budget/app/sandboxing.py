"""The tests' interpreter and sandbox, for the use cases that run a PR's code (`run`,
`guard verify`): the options, written once, and their checks."""

from __future__ import annotations

from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.options import option


# The tests' sandbox, for `run` and `guard verify` (both run PR code). Command line only: in a
# GPU job the config file is the PR's.
def sandbox_option():
    return option(
        "auto",
        choices=("auto", "on", "off"),
        help="run each test file in a bubblewrap sandbox: on (fail when it cannot start), off, "
        "or auto (on in a GitHub Actions job, off elsewhere)",
    )


def sandbox_expose_option():
    return option(
        list,
        flag="--sandbox-expose",
        metavar="PATH[:rw]",
        help="a path the sandbox hides (e.g. under $HOME) shown to the tests, read-only unless "
        "PATH:rw (repeatable)",
    )


def sandbox_network_option():
    return option(
        "host", choices=("host", "none"), help="the tests' network: host, or none (loopback only)"
    )


def sandbox_policy(mode: str, expose, network: str):
    from ci_budget.runner.sandbox import SandboxPolicy

    return SandboxPolicy(mode, tuple(expose or ()), network)


def open_sandbox(root: Path, config, policy, python: str, in_actions: bool, warn):
    """(the run's sandbox or None, the tests' environment). The policy comes from the command
    line (the workflow), never from the config file, which in a GPU job is the PR's. A sandbox
    that cannot start is a one-line error."""
    from ci_budget.runner.environment import tests_env
    from ci_budget.runner.sandbox import SandboxError
    from ci_budget.runner.sandbox import open_sandbox as open_box
    from ci_budget.runner.sandbox_mounts import checkout_of

    env = tests_env(config.env_drop, config.env_keep)
    if policy.mode == "off" and in_actions:
        warn("the tests run without a sandbox (--sandbox off): their code can reach this "
             "runner's processes, files and credentials")  # fmt: skip
    try:
        return open_box(policy, python, checkout_of(root), env, in_actions), env
    except SandboxError as exc:
        raise AppError(f"sandbox: {exc}") from None


def interpreter(name: str) -> str:
    """--python as an absolute path: tests run from the repository root or a worktree, not
    from here."""
    import shutil

    if "/" in name:
        path = Path(name).expanduser().absolute()
        found = str(path) if path.is_file() else None
    else:
        found = shutil.which(name)
    if found is None:
        raise AppError(f"--python {name}: no such interpreter")
    return found
