"""The tests' interpreter and sandbox, for the use cases that run a PR's code (`run`,
`guard verify`): the options, written once, and their checks."""

from __future__ import annotations

from pathlib import Path

from ci_budget.app.settings import AppError, option


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


def sandbox_cache_option():
    return option(
        list,
        flag="--sandbox-cache",
        metavar="PATH",
        help="a cache the tests read and write, beside $HOME/.cache, HF_HOME, TORCH_HOME, ...; "
        "their writes are discarded after the run (repeatable)",
    )


def env_drop_option():
    return option(list, metavar="NAME", help="drop this variable (or fnmatch pattern) from the "
                  "tests' environment, beside the credentials (repeatable)")  # fmt: skip


def env_keep_option():
    return option(list, metavar="NAME", help="keep this variable (or pattern) in the tests' "
                  "environment; never a token or a runner file command (repeatable)")  # fmt: skip


def sandbox_policy(options):
    """The policy from a use case's options (`sandbox*`, `env_drop`, `env_keep`)."""
    from ci_budget.runner.sandbox import SandboxPolicy

    return SandboxPolicy(options.sandbox, tuple(options.sandbox_expose or ()),
                         options.sandbox_network, tuple(options.sandbox_cache or ()),
                         tuple(options.env_drop or ()), tuple(options.env_keep or ()))  # fmt: skip


def open_sandbox(root: Path, config, policy, python: str, in_actions: bool, warn):
    """(the run's sandbox or None, the tests' environment). The policy comes from the command
    line (the workflow) and ci-budget's defaults, never from the config file, which in a GPU
    job is the PR's: its `env-drop` and `env-keep` are replaced here, with a warning. A sandbox
    that cannot start is a one-line error."""
    from ci_budget.runner.command import tests_env
    from ci_budget.runner.sandbox import SandboxError
    from ci_budget.runner.sandbox import open_sandbox as open_box
    from ci_budget.runner.sandbox_mounts import checkout_of

    if config.env_drop or config.env_keep:
        warn("the config file's env-drop and env-keep are ignored: the tests' environment "
             "comes from the workflow (--env-drop, --env-keep)")  # fmt: skip
    config.env_drop, config.env_keep = list(policy.env_drop), list(policy.env_keep)
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
