"""A temporary checkout of HEAD with fixes reverted: commits (`git revert`) or patch files
(`git apply -R`). The checkout is a `git worktree`, removed whatever happens."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HEX = re.compile(r"[0-9a-fA-F]{7,40}")


class RevertError(Exception):
    """A ref that cannot be reverted; the message names it and the files in conflict."""


def _git(where: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise RevertError("git is not installed (needed for a temporary checkout)") from None


def toplevel(path: Path) -> Path:
    proc = _git(path, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        raise RevertError(f"{path}: not inside a git repository")
    return Path(proc.stdout.strip())


@contextmanager
def head_worktree(repo: Path) -> Iterator[Path]:
    """A detached worktree of HEAD in a temporary directory; removed on the way out."""
    tmp = Path(tempfile.mkdtemp(prefix="ci-budget-guard-"))
    tree = tmp / "tree"
    proc = _git(repo, "worktree", "add", "--detach", "--quiet", str(tree), "HEAD")
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RevertError(f"cannot check out HEAD: {proc.stderr.strip()}")
    try:
        yield tree
    finally:
        _git(repo, "worktree", "remove", "--force", str(tree))
        shutil.rmtree(tmp, ignore_errors=True)
        _git(repo, "worktree", "prune")


def revert(tree: Path, ref: str, cwd: Path, sub: str = ".") -> str:
    """Revert one ref in `tree`: a patch file (found relative to `cwd`; its paths relative to
    the project root `sub` inside the repository) or a commit. Returns what it was
    (`patch PATH` / `commit SHA subject`). A ref of 7 to 40 hex digits is always a commit:
    a file of that name (a PR can add one) never stands in for it."""
    patch = Path(ref) if Path(ref).is_absolute() else cwd / ref
    if not _HEX.fullmatch(ref) and patch.is_file():
        where = [f"--directory={sub}"] if sub not in ("", ".") else []
        proc = _git(tree, "apply", "-R", *where, "--whitespace=nowarn", str(patch.resolve()))
        if proc.returncode != 0:
            files = sorted(set(re.findall(r"error: (?:patch failed: )?([^:\s]+)[:]", proc.stderr)))
            raise RevertError(
                f"{ref}: does not revert cleanly on HEAD: {', '.join(files) or proc.stderr.strip()}"
            )
        return f"patch {ref}"
    proc = _git(tree, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if proc.returncode != 0:
        raise RevertError(f"{ref}: neither a patch file nor a commit")
    sha = proc.stdout.strip()
    subject = _git(tree, "log", "-1", "--format=%s", sha).stdout.strip()
    proc = _git(tree, "revert", "--no-commit", sha)
    if proc.returncode != 0:
        conflicts = _git(tree, "diff", "--name-only", "--diff-filter=U").stdout.split()
        what = ", ".join(conflicts) or proc.stderr.strip()
        raise RevertError(f"{ref}: does not revert cleanly on HEAD: conflict in {what}")
    return f"commit {sha[:12]} {subject}"


def reset(tree: Path) -> None:
    """Back to HEAD: undo every revert (untracked files go too; ignored ones stay)."""
    _git(tree, "revert", "--quit")
    _git(tree, "reset", "--quiet", "--hard", "HEAD")
    _git(tree, "clean", "-fdq")
