"""Files read and written exactly as they are: every byte a command does not change (CRLF line
endings, a byte-order mark, trailing blanks) is written back as it was read, and a file is
replaced whole, never left half-written."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def read_source(path: Path) -> str:
    """The file's text, line endings untranslated (OSError, UnicodeDecodeError)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()


def write_source(path: Path, text: str) -> None:
    """`text` into `path` as given, through a temporary file beside it: a reader, or a kill
    mid-write, sees the old file or the new one. An existing file keeps its permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
