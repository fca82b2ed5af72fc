"""Markdown measured tables: `| fix | case | SM100 | SM90 | fixed |`. Pure.

The case column is the label column named `case`, `test` or `name`, else the last label
column; the group column is the one named `fix`, `group`, `pr`, `id` or `issue`, else the
first of two or more label columns.
"""

from __future__ import annotations

import re

from ci_budget.arch.layout import LABEL, Column, ParsedRow, Table, bad_cell, kind_of
from ci_budget.arch.names import arch_pattern, atoms

_MD_SEP_RE = re.compile(r":?-+:?\Z")
CASE_NAMES = ("case", "test", "name")
GROUP_NAMES = ("fix", "group", "pr", "id", "issue")


def md_cells(line: str) -> list[tuple[int, int, str]]:
    """Interior spans of `| a | b |` cells (between the pipes)."""
    pipes = [m.start() for m in re.finditer(r"(?<!\\)\|", line)]
    return [(a + 1, b, line[a + 1 : b].strip()) for a, b in zip(pipes, pipes[1:], strict=False)]


def parse_markdown_block(lines, lo, hi, arch_map) -> Table | None:
    columns = _header(lines, lo, hi, arch_map)
    if columns is None:
        return None
    table = Table("markdown", lo, hi - 1, columns, [])
    case_col, group_col = _label_columns(columns)
    for i in range(lo + 2, hi):
        row = _row(md_cells(lines[i]), i, columns, case_col, group_col, table.problems)
        if row is not None:
            table.rows.append(row)
    return table


def _header(lines, lo, hi, arch_map) -> list[Column] | None:
    """The columns, when lines[lo:hi] is a pipe table with a separator line and a column
    that names an architecture."""
    if hi - lo < 2 or not all(md_cells(lines[i]) for i in range(lo, hi)):
        return None
    head, sep = md_cells(lines[lo]), md_cells(lines[lo + 1])
    if len(head) != len(sep) or not all(_MD_SEP_RE.match(t) for _, _, t in sep):
        return None
    pat = arch_pattern(arch_map)
    columns = []
    for s, e, text in head:
        archs = {a.arch for a in atoms(text, pat, arch_map) if a.arch}
        arch = next(iter(archs)) if len(archs) == 1 else None
        columns.append(Column(s, e, text, kind_of(text, "", archs), arch))
    return columns if any(c.arch for c in columns) else None


def _label_columns(columns: list[Column]) -> tuple[int | None, int | None]:
    labels = [i for i, c in enumerate(columns) if c.kind == LABEL]
    named = {columns[i].label.lower(): i for i in labels}
    case_col = next((named[n] for n in CASE_NAMES if n in named), None)
    group_col = next((named[n] for n in GROUP_NAMES if n in named), None)
    if case_col is None and labels:
        case_col = labels[-1]
    if group_col is None and len(labels) >= 2:
        group_col = labels[0]
    return case_col, group_col


def _row(cells, i, columns, case_col, group_col, problems) -> ParsedRow | None:
    if len(cells) != len(columns):
        problems.append((i, f"row has {len(cells)} cells, the header {len(columns)}"))
        return None
    case = cells[case_col][2] if case_col is not None else ""
    if not case:
        problems.append((i, "row has no case label"))
        return None
    group = (cells[group_col][2] or None) if group_col is not None else None
    row = ParsedRow(i, group, case)
    errors = [p for c, (_, _, raw) in enumerate(cells) if (p := bad_cell(columns[c], raw))]
    problems.extend((i, e) for e in errors)
    row.cells = {c: cell for c, cell in enumerate(cells) if columns[c].kind != LABEL}
    return None if errors else row
