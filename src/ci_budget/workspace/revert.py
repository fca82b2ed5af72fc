"""A temporary checkout of HEAD with fixes reverted: commits (`git revert`) or patch files
(`git apply -R`). The checkout is a `git worktree`, removed whatever happens."""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ci_budget.workspace.git import GitError, git

_HEX = re.compile(r"[0-9a-fA-F]{7,40}")


def _text(where: Path, *args: str) -> str:
    return git(where, *args).decode("utf-8", "replace").strip()


def _quiet(where: Path, *args: str) -> None:
    """Clean-up: a failure changes nothing the caller could act on."""
    with contextlib.suppress(GitError):
        git(where, *args)


def toplevel(path: Path) -> Path:
    try:
        return Path(_text(path, "rev-parse", "--show-toplevel"))
    except GitError:
        raise GitError(f"{path}: not inside a git repository") from None


@contextmanager
def head_worktree(repo: Path) -> Iterator[Path]:
    """A detached worktree of HEAD in a temporary directory; removed on the way out."""
    tmp = Path(tempfile.mkdtemp(prefix="ci-budget-guard-"))
    tree = tmp / "tree"
    try:
        git(repo, "worktree", "add", "--detach", "--quiet", str(tree), "HEAD")
    except GitError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise GitError(f"cannot check out HEAD: {exc.stderr or exc}") from None
    try:
        yield tree
    finally:
        _quiet(repo, "worktree", "remove", "--force", str(tree))
        shutil.rmtree(tmp, ignore_errors=True)
        _quiet(repo, "worktree", "prune")


def revert(tree: Path, ref: str, cwd: Path, sub: str = ".") -> str:
    """Revert one ref in `tree`: a patch file (found relative to `cwd`; its paths relative to
    the project root `sub` inside the repository) or a commit. Returns what it was
    (`patch PATH` / `commit SHA subject`). A ref of 7 to 40 hex digits is always a commit:
    a file of that name (a PR can add one) never stands in for it."""
    patch = Path(ref) if Path(ref).is_absolute() else cwd / ref
    if not _HEX.fullmatch(ref) and patch.is_file():
        where = [f"--directory={sub}"] if sub not in ("", ".") else []
        try:
            git(tree, "apply", "-R", *where, "--whitespace=nowarn", str(patch.resolve()))
        except GitError as exc:
            files = sorted(set(re.findall(r"error: (?:patch failed: )?([^:\s]+)[:]", exc.stderr)))
            raise GitError(
                f"{ref}: does not revert cleanly on HEAD: {', '.join(files) or exc.stderr}"
            ) from None
        return f"patch {ref}"
    try:
        sha = _text(tree, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        raise GitError(f"{ref}: neither a patch file nor a commit") from None
    subject = _text(tree, "log", "-1", "--format=%s", sha)
    try:
        git(tree, "revert", "--no-commit", sha)
    except GitError as exc:
        conflicts = _text(tree, "diff", "--name-only", "--diff-filter=U").split()
        what = ", ".join(conflicts) or exc.stderr
        raise GitError(f"{ref}: does not revert cleanly on HEAD: conflict in {what}") from None
    return f"commit {sha[:12]} {subject}"


def reset(tree: Path) -> None:
    """Back to HEAD: undo every revert (untracked files go too; ignored ones stay)."""
    _quiet(tree, "revert", "--quit")
    _quiet(tree, "reset", "--quiet", "--hard", "HEAD")
    _quiet(tree, "clean", "-fdq")
