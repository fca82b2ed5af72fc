"""Test source files read and written exactly as they are: every byte a command does not change
(CRLF line endings, a byte-order mark, trailing blanks) is written back as it was read."""

from __future__ import annotations

from pathlib import Path


def read_source(path: Path) -> str:
    """The file's text, line endings untranslated (OSError, UnicodeDecodeError)."""
    with path.open(encoding="utf-8", newline="") as fh:
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
