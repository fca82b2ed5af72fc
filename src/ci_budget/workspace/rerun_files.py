"""The unregistered test files `/rerun-test` may name (`github.rerun-dirs`): `test_*.py` files
under those folders, in the working tree or at a commit (from `git ls-tree`, reading no file)."""

from __future__ import annotations

import os
from pathlib import Path

from ci_budget.config import Config
from ci_budget.workspace.git import git


def _wanted(rel: str) -> bool:
    name = rel.rpartition("/")[2]
    return name.startswith("test_") and name.endswith(".py")


def rerun_files(root: Path, config: Config) -> list[str]:
    """Repo-relative `test_*.py` paths under the rerun folders of the working tree, sorted."""
    out = []
    for directory in config.github.rerun_dirs:
        top = root / directory.strip("/")
        for folder, dirs, names in os.walk(top):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = Path(folder).relative_to(root).as_posix()
            out += [f"{rel}/{n}" for n in names if _wanted(n)]
    return sorted(out)


def rerun_files_at(root: Path, sha: str, config: Config) -> list[str]:
    """The same at commit `sha` (which the checkout has: read with its registry)."""
    dirs = [d.strip("/") for d in config.github.rerun_dirs]
    if not dirs:
        return []
    out = git(root, "ls-tree", "-r", "-z", "--name-only", sha, "--", *dirs)
    return sorted(rel for rel in out.decode("utf-8", "surrogateescape").split("\0") if rel
                  and _wanted(rel))  # fmt: skip
