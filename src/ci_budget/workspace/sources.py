"""Test source files read and written exactly as they are (line endings kept), for the commands
that edit them in place."""

from __future__ import annotations

from pathlib import Path


def read_source(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as fh:  # keep CRLF as it is
        return fh.read()


def write_source(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def inside(root: Path, rel: str) -> bool:
    """Whether `rel`, a path that data names (a results file, an artifact), is a file of the
    checkout at `root`: relative, no `..`, no link out of it."""
    if not rel or len(rel) > 4096 or "\0" in rel or rel.startswith("/") or ".." in rel.split("/"):
        return False
    try:
        path = (root / rel).resolve()
        return path.is_relative_to(root.resolve()) and path.is_file()
    except (OSError, ValueError):
        return False


def repo_relative(root: Path, path: str, cwd: Path | None = None) -> str:
    """`path` (absolute, or relative to `cwd`) relative to `root`; unchanged when outside it."""
    p = Path(path)
    p = p if p.is_absolute() else (cwd or Path.cwd()) / p
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return path
