"""The one way ci-budget runs git (`git`, `GitError`, a timeout on every call), test files as
they are at a git ref (the PR base), and a temporary checkout of HEAD with fixes reverted.

One `git ls-tree` lists the files under the globs' fixed directories; one `git cat-file --batch`
process reads all their blobs. The working tree is never touched. The reverted checkout (commits
by `git revert`, patch files by `git apply -R`) is a `git worktree`, removed whatever happens.
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ci_budget.config import Config
from ci_budget.models import secs

GLOB_CHARS = set("*?[")
TIMEOUT = 120.0  # seconds any git command may take (a fetch names its own)


class GitError(Exception):
    """A git command failed, or could not run; the message says which and why, `stderr` is
    git's own account."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message)
        self.stderr = stderr


def git(
    root: Path,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
    what: str = "",
) -> bytes:
    """The output of `git -C root ARGS`, or GitError when git is missing, fails or runs past
    `timeout` seconds; `what` names the command in the message (default `git ARGS[0]`)."""
    what = what or f"git {args[0]}"
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], input=input, env=env, capture_output=True,
            timeout=timeout, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"{what} took longer than {secs(timeout)}") from None
    except OSError as exc:
        raise GitError(f"{what}: {exc.strerror}") from None
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        detail = stderr.splitlines()[-1] if stderr else f"exit {proc.returncode}"
        raise GitError(f"{what} failed: {detail}", stderr)
    return proc.stdout


def resolve(root: Path, ref: str) -> str:
    """The commit sha of `ref`, or a GitError that says how to get it."""
    try:
        out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    except GitError as exc:
        if "not installed" in str(exc):
            raise
        if not in_work_tree(root):
            raise GitError(
                f"{root} is not inside a git repository (diff compares git commits)"
            ) from None
        raise GitError(
            f"base ref {ref!r} is not a commit in {root} (in a shallow checkout, fetch it: "
            f"`git fetch --depth=1 origin {ref}` or use fetch-depth: 0)"
        ) from None
    return out.decode().strip()


def glob_dirs(globs: Iterable[str]) -> list[str]:
    """The fixed leading directories of each glob: where ls-tree needs to look."""
    dirs = set()
    for pattern in globs:
        fixed = []
        for part in pattern.split("/")[:-1]:
            if GLOB_CHARS & set(part):
                break
            fixed.append(part)
        dirs.add("/".join(fixed) or ".")
    return sorted(dirs)


def _match_parts(parts: list[str], pats: list[str]) -> bool:
    if not pats:
        return not parts
    if pats[0] == "**":  # zero or more directories, as Path.glob
        return any(_match_parts(parts[i:], pats[1:]) for i in range(len(parts) + 1))
    return (
        bool(parts) and fnmatch.fnmatchcase(parts[0], pats[0]) and _match_parts(parts[1:], pats[1:])
    )


def glob_match(rel: str, pattern: str) -> bool:
    parts, pats = rel.split("/"), pattern.split("/")
    if pats.count("**") != 1:
        return _match_parts(parts, pats)
    # One `**` (the usual shape): the parts before it and after it, matched at both ends.
    cut = pats.index("**")
    head, tail = pats[:cut], pats[cut + 1 :]
    return (
        len(parts) >= len(head) + len(tail)
        and all(map(fnmatch.fnmatchcase, parts[:cut], head))
        and all(map(fnmatch.fnmatchcase, parts[len(parts) - len(tail) :], tail))
    )


def excluded(rel: str, config: Config) -> bool:
    """Whether the config's `exclude` patterns drop `rel` (by file name or path)."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(rel, pat) for pat in config.exclude)


def selected(rel: str, config: Config) -> bool:
    """The same selection `scan.discover` makes in the working tree."""
    return any(glob_match(rel, p) for p in config.test_globs) and not excluded(rel, config)


def list_files(root: Path, commit: str, config: Config) -> list[str]:
    """The test files at `commit`, sorted by path, from one `git ls-tree` (no file is read)."""
    out = git(root, "ls-tree", "-r", "-z", "--name-only", commit, "--",
              *glob_dirs(config.test_globs))  # fmt: skip
    names = out.decode("utf-8", "surrogateescape").split("\0")
    return sorted(rel for rel in names if rel and selected(rel, config))


def read_blobs(root: Path, commit: str, rels: list[str]) -> dict[str, bytes]:
    """{rel: content} for every path that is a blob at `commit`, in one git process."""
    if not rels:
        return {}
    # `commit:./path` is relative to the root, which may be a folder inside the repository
    request = "".join(f"{commit}:./{rel}\n" for rel in rels).encode("utf-8", "surrogateescape")
    out = git(root, "cat-file", "--batch", input=request)
    blobs: dict[str, bytes] = {}
    pos = 0
    for rel in rels:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            blobs[rel] = out[pos : pos + size]
            pos += size + 1  # content, then a newline
        elif len(header) == 3:  # a tree or submodule: skip its content
            pos += int(header[2]) + 1
        # "<request> missing": not at that commit
    return blobs


def changed_files(root: Path, commit: str) -> list[str]:
    """Paths that differ between `commit` and the working tree (tracked files)."""
    out = git(root, "diff", "--name-only", "--relative", "-z", "--no-renames", commit, "--")
    return sorted(n for n in out.decode("utf-8", "surrogateescape").split("\0") if n)


def head_commit(root: Path) -> str | None:
    """The checked-out commit, or None outside a git checkout."""
    try:
        return git(root, "rev-parse", "HEAD", timeout=10).decode().strip() or None
    except GitError:
        return None


def repo_path(root: Path, rel: str) -> str:
    """`rel` (relative to `root`) as GitHub names it: from the repository's top level, so a
    project in a folder of a larger repository still points at its own files."""
    try:
        prefix = git(root, "rev-parse", "--show-prefix").decode("utf-8").strip()
    except GitError:
        prefix = ""
    return prefix + rel


def in_work_tree(root: Path) -> bool:
    """Whether `root` is inside a git work tree."""
    try:
        return git(root, "rev-parse", "--is-inside-work-tree").strip() == b"true"
    except GitError:
        return False


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
