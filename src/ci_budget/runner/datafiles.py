"""Files the tests wrote, taken back as data.

The report files (pytest-json-report, pytest-reportlog, the progress stream) are written by
the tests' process, so they are whatever the tests made them: a symlink to the runner's
secrets, a FIFO that blocks a reader forever, a file of many gigabytes. ci-budget opens them
only inside the folder it made, never through a symlink, only as regular files, and only up to
a size cap, then copies them into the artifacts folder it owns; everything later reads those
copies.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

MAX_REPORT_BYTES = 64 * 1024 * 1024
SUFFIXES = (".json", ".jsonl", ".progress.jsonl")


def read_capped(folder: Path, name: str, cap: int = MAX_REPORT_BYTES) -> bytes | str | None:
    """The bytes of `folder/name` when it is a regular file of at most `cap` bytes; None when
    it is absent; a one-line reason (str) when it is there but refused."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{name}: not a regular file ({exc.strerror})"
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return f"{name}: not a regular file"
        data = fh.read(cap + 1)
    if len(data) > cap:
        return f"{name}: over {cap // (1024 * 1024)} MiB"
    return data


def tail(folder: Path, name: str, size: int = 4096) -> bytes:
    """The last `size` bytes of a file the tests are still writing (same rules), or b""."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(folder / name, flags)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return b""
        fh.seek(max(0, st.st_size - size))
        return fh.read(size)


def collect(out: Path, art: Path, stem: str) -> list[str]:
    """Copy the file's reports from `out` into `art`; the reasons for any refused."""
    problems = []
    for suffix in SUFFIXES:
        got = read_capped(out, stem + suffix)
        if isinstance(got, bytes):
            _write_new(art / (stem + suffix), got)
        elif isinstance(got, str):
            problems.append(f"report file refused: {got}")
    return problems


def _write_new(path: Path, data: bytes) -> None:
    """A new file: whatever stood at `path` (a planted symlink too) is removed, not followed."""
    path.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags, 0o644), "wb") as fh:
        fh.write(data)


def clear(folder: Path) -> None:
    """Empty the tests' folder between files (nothing planted by one file is read for the
    next)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700, exist_ok=True)
