"""The guard tables (measured-KL tables in docstrings) the use cases check.

Every use case reads guard tables through `table_rows`, so when `arch` takes source text instead
of opening files itself, only this function changes (the files are then read here, through
`workspace`).
"""

from __future__ import annotations

from ci_budget.models import ArchRow, Problem


def table_rows(
    settings, rels: list[str], ci_arch: str | None = None
) -> tuple[list[ArchRow], list[Problem]]:
    """Flagged rows and problems of the repo-relative files `rels` (see `arch.flags`)."""
    from ci_budget.workspace.guards import rows_for_files

    rows, problems = rows_for_files(settings.root, rels, settings.config, ci_arch)
    return list(rows), list(problems)


def table_rows_and_classes(settings, rels: list[str], ci_arch: str | None = None):
    """`table_rows`, and the class names each file defines (for matching tests to rows)."""
    from ci_budget.workspace.guards import guard_files

    rows, problems, classes = guard_files(settings.root, rels, settings.config, ci_arch)
    return list(rows), list(problems), classes


def table_rows_at(settings, commit: str, rels: list[str]) -> list[ArchRow]:
    """Flagged rows of `rels` at `commit` (the static report's base), for what the PR changed."""
    from ci_budget.workspace.guards import rows_at_commit

    return rows_at_commit(settings.root, commit, rels, settings.config)
