"""Guard files on disk: read them and hand their text to the pure `ci_budget.arch` code."""

from __future__ import annotations

from pathlib import Path

from ci_budget.arch.docstrings import flagged_rows
from ci_budget.config import Config
from ci_budget.models import ArchRow, Problem
from ci_budget.workspace.sources import read_source


def rows_at_commit(root: Path, commit: str, rels: list[str], config: Config) -> list[ArchRow]:
    """Flagged rows of the files `rels` as they were at `commit` (a file absent there, or
    not text, has none)."""
    from ci_budget.workspace.git import read_blobs

    rows: list[ArchRow] = []
    for rel, raw in read_blobs(root, commit, rels).items():
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        rows.extend(r for r in flagged_rows(rel, source, config)[0] if r.flags)
    return rows


def guard_files(
    root: Path, rels: list[str], config: Config, ci_arch: str | None = None
) -> tuple[list[ArchRow], list[Problem], dict[str, set[str]]]:
    """(rows, problems, classes) of the repo-relative files `rels`: their flagged table rows
    (see `arch.docstrings.flagged_rows`) and the class names each file defines."""
    rows: list[ArchRow] = []
    problems: list[Problem] = []
    names: dict[str, set[str]] = {}
    for rel in rels:
        try:
            source = read_source(root / rel)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(file=rel, message=f"cannot read: {exc}"))
            continue
        found, probs, names[rel] = flagged_rows(rel, source, config, ci_arch)
        rows.extend(found)
        problems.extend(probs)
    return rows, problems, names
