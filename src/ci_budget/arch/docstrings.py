"""Measured tables in a file's module and class docstrings, as `ArchRow`s with file lines. Pure.

The file is read with `ast`, never imported.
"""

from __future__ import annotations

import ast
from collections import deque

from ci_budget.arch.layout import FIXED, REVERTED, Table
from ci_budget.arch.names import parse_cell
from ci_budget.arch.table import parse_tables
from ci_budget.models import ArchCell, ArchRow, Problem


def parse_python(source: str, rel: str) -> tuple[ast.Module | None, list[Problem]]:
    try:
        return ast.parse(source, filename=rel), []
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return None, [Problem(file=rel, line=line, message=f"cannot parse: {exc}")]


def class_names(source: str | ast.Module) -> set[str]:
    """Names of the classes a file (its text or its tree) defines, at any depth; empty when it
    does not parse."""
    tree = source if isinstance(source, ast.Module) else parse_python(source, "")[0]
    return {n.name for n in class_defs(tree)} if tree is not None else set()


# Nodes whose fields can hold statements. A class is a statement, and no expression holds one
# (a lambda's body is an expression), so a walk of these alone meets every class.
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def class_defs(tree: ast.Module) -> list[ast.ClassDef]:
    """Every class in the tree, in `ast.walk`'s order (breadth first), without visiting the
    expressions: on a test file that is most of its nodes, and most of the walk's time."""
    out: list[ast.ClassDef] = []
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.ClassDef):
            out.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], _HOLDERS):
                todo.extend(value)
    return out


def _docstrings(tree: ast.Module) -> list[ast.Constant]:
    nodes = [tree, *class_defs(tree)]
    out = []
    for node in nodes:
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            out.append(first.value)
    return out


def _line_map(src_lines: list[str], node: ast.Constant) -> list[int | None]:
    """File line (1-based) of each docstring line, None where the source spells it otherwise."""
    out: list[int | None] = []
    cursor = node.lineno
    end = node.end_lineno or node.lineno
    for text in node.value.split("\n"):
        found = next((n for n in range(cursor, end + 1) if text in src_lines[n - 1]), None)
        out.append(found)
        if found is not None:
            cursor = found + 1
    return out


def parse_source(source: str, rel: str, arch_map: dict[str, str], tree: ast.Module | None = None):
    """(rows, problems, tables) for one file; tables are (docstring node, line map, Table).
    `tree`: the source's tree when the caller has parsed it already."""
    tree, problems = (tree, []) if tree is not None else parse_python(source, rel)
    rows: list[ArchRow] = []
    tables = []
    if tree is None:
        return rows, problems, tables
    src_lines = source.split("\n")
    for node in _docstrings(tree):
        line_map = _line_map(src_lines, node)
        for table in parse_tables(node.value, arch_map):
            tables.append((node, line_map, table))
            rows.extend(_table_rows(table, rel, line_map, problems))
    return rows, problems, tables


def file_line(line_map: list[int | None], index: int) -> int:
    return line_map[index] or 0


def _reverted_columns(table: Table, rel: str, at: int, problems: list[Problem]) -> dict[str, int]:
    reverted: dict[str, int] = {}
    for k, col in enumerate(table.columns):
        if col.kind != REVERTED:
            continue
        if col.arch is None:
            message = f"column '{col.label}' names no architecture"
        elif col.arch in reverted:
            message = f"two reverted columns for {col.arch}"
        else:
            reverted[col.arch] = k
            continue
        problems.append(Problem(file=rel, line=at, message=message))
    return reverted


def _table_rows(table: Table, rel: str, line_map, problems: list[Problem]) -> list[ArchRow]:
    at = file_line(line_map, table.first)
    for index, message in table.problems:
        problems.append(Problem(file=rel, line=file_line(line_map, index), message=message))
    reverted = _reverted_columns(table, rel, at, problems)
    fixed = [k for k, c in enumerate(table.columns) if c.kind == FIXED]
    rows, group = [], None
    for r in table.rows:
        group = r.group or group
        row = ArchRow(
            file=rel,
            line=file_line(line_map, r.index),
            table_line=at,
            group=group,
            case=r.case,
            reverted={a: _cell(r, k) for a, k in reverted.items()},
            fixed=_cell(r, fixed[0]) if fixed else None,
        )
        rows.append(row)
    return rows


def _cell(row, col: int) -> ArchCell:
    if col not in row.cells:
        return ArchCell(raw="", na=True)
    return parse_cell(row.cells[col][2]) or ArchCell(raw=row.cells[col][2], na=True)
