"""A commit's registrations, read as data (edge): fetched by SHA when the checkout lacks it, its
test files read as git blobs and parsed (AST), never checked out, imported or run.

This is how plan, running from the base branch's code, learns what an approved PR commit
registers: the PR's code decides nothing but the data it declares.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

from ci_budget.config import Config
from ci_budget.models import Registration
from ci_budget.registry.parse import merge, scan_source
from ci_budget.workspace.git import GitError, git, list_files, read_blobs

SHA = re.compile(r"[0-9a-f]{40}")


def _has_commit(root: Path, sha: str) -> bool:
    try:
        git(root, "cat-file", "-e", f"{sha}^{{commit}}")
    except GitError:
        return False
    return True


def fetch_commit(root: Path, sha: str, token: str | None = None) -> None:
    """Fetch `sha` (one commit deep) from `origin` unless the checkout has it. The token, when
    given, travels as an HTTP header in git's environment: never in argv, never in a file."""
    if not SHA.fullmatch(sha):
        raise GitError(f"{sha!r} is not a full commit SHA")
    if _has_commit(root, sha):
        return
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraheader",
            GIT_CONFIG_VALUE_0=f"AUTHORIZATION: basic {basic}",
        )
    what = f"git fetch {sha[:12]}"
    git(root, "fetch", "--quiet", "--no-tags", "--depth=1", "origin", sha, env=env, timeout=300,
        what=what)  # fmt: skip
    if not _has_commit(root, sha):
        raise GitError(f"{what} failed: the commit is not there after it")


def registrations_at(
    root: Path, sha: str, config: Config, token: str | None = None
) -> list[Registration]:
    """The registrations of the test files at commit `sha`, under `root`, by `config` (the
    checkout's configuration: a PR's own ci-budget.toml is not read)."""
    fetch_commit(root, sha, token)
    blobs = read_blobs(root, sha, list_files(root, sha, config))
    return merge(
        scan_source(data, rel, config) for rel, data in sorted(blobs.items())
    ).registrations


def range_log(root: Path, before: str, after: str) -> list[tuple[str, str, tuple[str, ...]]] | None:
    """The commits in `before..after` (first-parent order, newest first), each as (sha, subject,
    paths it touched); None when the checkout lacks either commit or either is not a SHA."""
    if not (SHA.fullmatch(before) and SHA.fullmatch(after)):
        return None
    if not (_has_commit(root, before) and _has_commit(root, after)):
        return None
    out = git(root, "log", "--no-renames", "--format=%x01%H%x00%s", "--name-only",
              f"{before}..{after}", what="git log").decode("utf-8", "replace")  # fmt: skip
    commits = []
    for entry in out.split("\x01")[1:]:
        head, _, rest = entry.partition("\n")
        sha, _, subject = head.partition("\x00")
        paths = tuple(p for p in rest.splitlines() if p.strip())
        commits.append((sha, subject, paths))
    return commits


BOT = {
    "GIT_AUTHOR_NAME": "github-actions[bot]",
    "GIT_AUTHOR_EMAIL": "41898282+github-actions[bot]@users.noreply.github.com",
}
BOT |= {
    "GIT_COMMITTER_NAME": BOT["GIT_AUTHOR_NAME"],
    "GIT_COMMITTER_EMAIL": BOT["GIT_AUTHOR_EMAIL"],
}


def push_branch(root: Path, branch: str, paths: list[str], message: str) -> bool:
    """Commit `paths` (their changes in the work tree) on `branch`, made afresh from HEAD, and
    force-push it to origin (the branch is ci-budget's own: rewritten every time). False, and
    nothing done, when none of them changed."""
    if not git(root, "status", "--porcelain", "--", *paths).strip():
        return False
    env = {**os.environ, **BOT}
    git(root, "checkout", "-q", "-B", branch)
    git(root, "add", "--", *paths)
    git(root, "commit", "-q", "--no-verify", "-m", message, env=env)
    git(root, "push", "-q", "--force", "origin", f"HEAD:refs/heads/{branch}", env=env,
        timeout=300, what=f"git push {branch}")  # fmt: skip
    return True
