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


def repo_relative(root: Path, path: str, cwd: Path | None = None) -> str:
    """`path` (absolute, or relative to `cwd`) relative to `root`; unchanged when outside it."""
    p = Path(path)
    p = p if p.is_absolute() else (cwd or Path.cwd()) / p
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return path
