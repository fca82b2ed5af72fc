"""The tests' environment: the runner's, less GitHub credentials and the runner's file commands.

A test is PR code. In an Actions job the environment holds the job's token, the runtime and OIDC
tokens (cache, artifacts, cloud credentials) and the paths of the runner's command files, through
which a step sets outputs, environment and PATH for later steps. None of that is for the tests;
what model tests need (HF_TOKEN, CUDA_*, proxies, ...) is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

# Names or fnmatch patterns, matched case-sensitively (environment names are on Linux).
DEFAULT_DROP = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_CACHE_URL",
    "ACTIONS_CACHE_SERVICE_V2",
    "ACTIONS_RESULTS_URL",
    "INPUT_*",
    "CI_BUDGET_COMMENT_LOGIN",
)


# The runner's own: the job token, a job's runtime, cache and OIDC credentials (scoped to the
# default branch under pull_request_target and issue_comment) and its file commands. No
# `--env-keep` brings these back.
NEVER_KEPT = ("ACTIONS_*", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STATE",
              "GITHUB_STEP_SUMMARY", "INPUT_*", "GITHUB_TOKEN", "GH_TOKEN",
              "GH_ENTERPRISE_TOKEN")  # fmt: skip


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def scrubbed_env(
    env: Mapping[str, str], drop: Iterable[str] = (), keep: Iterable[str] = ()
) -> dict[str, str]:
    """`env` less DEFAULT_DROP and `drop`; a name matching `keep` stays whatever the rest says,
    except the runner's own credentials and file commands (NEVER_KEPT). A variable holding the
    value of a dropped token under another name (`MY_TOKEN: ${{ github.token }}`) goes too."""
    dropped = (*DEFAULT_DROP, *drop)
    keep = tuple(keep)
    kept = {
        k: v
        for k, v in env.items()
        if not _matches(k, NEVER_KEPT) and (_matches(k, keep) or not _matches(k, dropped))
    }
    tokens = {v for k, v in env.items() if k not in kept and "TOKEN" in k and len(v) >= 8}
    return {k: v for k, v in kept.items() if not any(t in v for t in tokens)}


def tests_env(drop: Iterable[str] = (), keep: Iterable[str] = ()) -> dict[str, str]:
    """The tests' environment: this process's, scrubbed (the one place it is read for them)."""
    import os

    return scrubbed_env(os.environ, drop, keep)


def step_file_env(env_text: str, path_text: str, base: Mapping[str, str]) -> dict[str, str]:
    """What an install step wrote to its own GITHUB_ENV (`NAME=value`, `NAME<<DELIM` ...
    `DELIM`) and GITHUB_PATH (a folder a line, first on PATH), as runner reads them: for the
    tests' environment, never the job's (the runner's own files are out of the sandbox's reach)."""
    found: dict[str, str] = {}
    lines = env_text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        name, eq, value = line.partition("=")
        if "<<" in line and (not eq or "<<" in name):
            name, _, delim = line.partition("<<")
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == delim), len(lines))
            found[name], i = "\n".join(lines[i + 1 : end]), end + 1
            continue
        if eq and name:
            found[name] = value
        i += 1
    folders = [x for x in path_text.splitlines() if x.strip()]
    if folders:
        path = found.get("PATH", base.get("PATH", ""))
        found["PATH"] = ":".join([*reversed(folders), *([path] if path else [])])
    return found
