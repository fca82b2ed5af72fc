"""Guard files on disk: read them and hand their text to the pure `ci_budget.arch` code."""

from __future__ import annotations

from pathlib import Path

from ci_budget.arch.docstrings import class_names
from ci_budget.arch.flags import flagged_rows
from ci_budget.config import Config
from ci_budget.models import ArchRow, Problem


def read_source(root: Path, rel: str) -> tuple[str | None, Problem | None]:
    try:
        return (root / rel).read_text(encoding="utf-8"), None
    except (OSError, UnicodeDecodeError) as exc:
        return None, Problem(file=rel, message=f"cannot read: {exc}")


def rows_for_files(
    root: Path, rels: list[str], config: Config, ci_arch: str | None = None
) -> tuple[list[ArchRow], list[Problem]]:
    """Flagged rows and problems of the given repo-relative files. `ci_arch` None: each file's
    registered runner config, else its docstring's "CI runs X" hint."""
    rows, problems, _ = guard_files(root, rels, config, ci_arch, classes=False)
    return rows, problems


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
    root: Path, rels: list[str], config: Config, ci_arch: str | None = None, classes: bool = True
):
    """(rows, problems, classes): `classes` maps each file to the class names it defines (left
    empty with `classes=False`, which saves a second parse of every file)."""
    rows: list[ArchRow] = []
    problems: list[Problem] = []
    names: dict[str, set[str]] = {}
    for rel in rels:
        source, problem = read_source(root, rel)
        if source is None:
            problems.append(problem)
            continue
        found, probs = flagged_rows(rel, source, config, ci_arch)
        rows.extend(found)
        problems.extend(probs)
        if classes:
            names[rel] = class_names(source)
    return rows, problems, names
