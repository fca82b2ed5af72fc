"""Test files as they are at a git ref (the PR base), read with the `git` command.

One `git ls-tree` lists the files under the globs' fixed directories; one `git cat-file --batch`
process reads all their blobs. The working tree is never touched.
"""

from __future__ import annotations

import fnmatch
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ci_budget.config import Config

GLOB_CHARS = set("*?[")


class GitError(Exception):
    """A git command failed; the message says which ref and why."""


def _git(root: Path, *args: str, input: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], input=input, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise GitError("git is not installed (needed to read the base ref)") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else proc.returncode}")
    return proc.stdout


def resolve(root: Path, ref: str) -> str:
    """The commit sha of `ref`, or a GitError that says how to get it."""
    try:
        out = _git(
            root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
        )
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


def selected(rel: str, config: Config) -> bool:
    """The same selection `scanner.discover` makes in the working tree."""
    if not any(glob_match(rel, pattern) for pattern in config.test_globs):
        return False
    name = rel.rsplit("/", 1)[-1]
    return not any(
        fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(rel, pat) for pat in config.exclude
    )


def tree_blobs(root: Path, commit: str, config: Config) -> dict[str, str]:
    """{rel: object id} of the test files at `commit`, sorted by path, from one `git ls-tree`.
    A blob's id names its content, so a cache can be consulted without reading any file."""
    out = _git(root, "ls-tree", "-r", "-z", commit, "--", *glob_dirs(config.test_globs))
    found = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, rel = entry.partition("\t")
        kind = meta.split(" ")
        if rel and len(kind) == 3 and selected(rel, config):
            found[rel] = kind[2]
    return dict(sorted(found.items()))


def list_files(root: Path, commit: str, config: Config) -> list[str]:
    return list(tree_blobs(root, commit, config))


def read_blobs(root: Path, commit: str, rels: list[str]) -> dict[str, bytes]:
    """{rel: content} for every path that is a blob at `commit`, in one git process."""
    if not rels:
        return {}
    # `commit:./path` is relative to the root, which may be a folder inside the repository
    request = "".join(f"{commit}:./{rel}\n" for rel in rels).encode("utf-8", "surrogateescape")
    out = _git(root, "cat-file", "--batch", input=request)
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


def files_at(root: Path, ref: str, config: Config) -> tuple[str, dict[str, bytes]]:
    """(commit, {rel: content}) of the test files at `ref`."""
    commit = resolve(root, ref)
    return commit, read_blobs(root, commit, list_files(root, commit, config))


def changed_files(root: Path, commit: str) -> list[str]:
    """Paths that differ between `commit` and the working tree (tracked files)."""
    out = _git(root, "diff", "--name-only", "--relative", "-z", "--no-renames", commit, "--")
    return sorted(n for n in out.decode("utf-8", "surrogateescape").split("\0") if n)


def head_commit(root: Path) -> str | None:
    """The checked-out commit, or None outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def repo_path(root: Path, rel: str) -> str:
    """`rel` (relative to `root`) as GitHub names it: from the repository's top level, so a
    project in a folder of a larger repository still points at its own files."""
    try:
        prefix = _git(root, "rev-parse", "--show-prefix").decode("utf-8").strip()
    except GitError:
        prefix = ""
    return prefix + rel


def in_work_tree(root: Path) -> bool:
    """Whether `root` is inside a git work tree."""
    try:
        return _git(root, "rev-parse", "--is-inside-work-tree").strip() == b"true"
    except GitError:
        return False
