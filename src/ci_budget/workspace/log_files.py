"""Downloaded CI logs on disk (edge): a log file, a directory of them, or GitHub's run-log zip."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath


# --- from files ----------------------------------------------------------------------------------
def log_sources(path: Path) -> Iterator[tuple[str, str | None, Callable[[], Iterable[str]]]]:
    """(display name, job name or None, opener) for a log file, a directory of them, or a zip
    of a run's logs (`N_job name.txt` at the top, `job name/N_step.txt` inside folders)."""
    if path.is_dir():
        for item in sorted(p for p in path.rglob("*") if p.is_file()):
            rel = item.relative_to(path)
            yield str(item), _job_name(PurePosixPath(rel.as_posix())), _opener(item)
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in sorted(zf.infolist(), key=lambda i: i.filename):
                if info.is_dir():
                    continue
                name = f"{path}:{info.filename}"
                data = zf.read(info)
                yield name, _job_name(PurePosixPath(info.filename)), _text(data)
    else:
        yield str(path), _job_name(PurePosixPath(path.name)), _opener(path)


def _job_name(rel: PurePosixPath) -> str | None:
    """The job GitHub's log layout names (`job name/N_step.txt`, `N_job name.txt`); None for
    a file named otherwise, whose name is the user's, not a job's."""
    if len(rel.parts) > 1:  # a step's log inside its job's folder
        return rel.parts[-2]
    head, sep, tail = rel.stem.partition("_")
    return tail if sep and head.isdigit() and tail else None


def _opener(path: Path) -> Callable[[], Iterable[str]]:
    def lines() -> Iterator[str]:
        with path.open(encoding="utf-8", errors="replace", newline="") as fh:
            yield from fh

    return lines


def _text(data: bytes) -> Callable[[], Iterable[str]]:
    return lambda: data.decode("utf-8", errors="replace").splitlines()
