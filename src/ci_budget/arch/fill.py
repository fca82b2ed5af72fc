"""Write measured values into a file's tables, keeping the layout. Pure: source in, source out."""

from __future__ import annotations

from ci_budget.arch.docstrings import file_line, parse_source
from ci_budget.arch.edit import set_cell, set_cells
from ci_budget.arch.layout import FIXED, REVERTED, ArchTableError, Table
from ci_budget.arch.names import format_value
from ci_budget.arch.table import parse_tables
from ci_budget.models import ArchRow, Problem


def _target_columns(table: Table, kind: str, arch: str) -> list[int]:
    """The column of `kind` for `arch`, else the one of `kind` without an arch."""
    cols = [k for k, c in enumerate(table.columns) if c.kind == kind and c.arch == arch]
    return cols or [k for k, c in enumerate(table.columns) if c.kind == kind and c.arch is None]


def fill_source(
    source: str,
    rel: str,
    rows: list[ArchRow],
    arch: str,
    reverted: bool,
    arch_map: dict[str, str],
) -> tuple[str, list[tuple[int, list[str]]], list[Problem]]:
    """Write each row's `measured[arch]` into its table: the reverted column for `arch` when
    `reverted`, else the fixed column (the one for `arch`, or the one without an arch).
    Returns the new source, (file line, lines) of every table touched, and problems."""
    kind = REVERTED if reverted else FIXED
    by_line = {(r.file, r.line): r for r in rows}
    src_lines = source.split("\n")
    touched, problems = [], []
    _, _, tables = parse_source(source, rel, arch_map)
    for node, line_map, table in tables:
        cols = _target_columns(table, kind, arch)
        lines = node.value.split("\n")
        found = [(r, by_line.get((rel, file_line(line_map, r.index)))) for r in table.rows]
        found = [(r, row) for r, row in found if row is not None and arch in row.measured]
        if not found:
            continue
        if not cols:
            message = f"no {kind} column for {arch}"
            problems.append(Problem(file=rel, line=found[0][1].table_line, message=message))
            continue
        edits = {(r.index, cols[0]): format_value(row.measured[arch]) for r, row in found}
        try:  # every value in one edit; one at a time only to name a cell that does not fit
            lines = set_cells(lines, table, edits, arch_map)
        except ArchTableError:
            lines = _one_at_a_time(lines, table, found, cols[0], arch, arch_map, problems)
        if lines is not None:
            _write_back(src_lines, node, line_map, lines, table, rel)
            touched.append((file_line(line_map, table.first), lines[table.first : table.last + 1]))
    return "\n".join(src_lines), touched, problems


def _one_at_a_time(lines, table: Table, found, col: int, arch: str, arch_map, problems):
    """Each value on its own, a problem for each that does not fit; None if none did."""
    rel = found[0][1].file
    changed = False
    for r, row in found:
        fresh = next(t for t in parse_tables("\n".join(lines), arch_map) if t.first == table.first)
        try:
            lines = set_cell(lines, fresh, r.index, col, format_value(row.measured[arch]), arch_map)
            changed = True
        except ArchTableError as exc:
            problems.append(Problem(file=rel, line=row.line, message=str(exc)))
    return lines if changed else None


def _write_back(src_lines, node, line_map, lines, table: Table, rel: str) -> None:
    old = node.value.split("\n")
    for i in range(table.first, table.last + 1):
        if lines[i] == old[i]:
            continue
        n = line_map[i]
        pos = src_lines[n - 1].find(old[i]) if n else -1
        if pos < 0:
            raise ArchTableError(f"{rel}:{n or node.lineno}: table line is not plain source text")
        src = src_lines[n - 1]
        src_lines[n - 1] = src[:pos] + lines[i] + src[pos + len(old[i]) :]


def fill_values(source: str, rel: str, values, arch: str, arch_map: dict[str, str]):
    """Write `guard verify`'s values (GuardValue: group, case, reverted, fixed) into the file's
    table: the reverted column of `arch` for rows with a reverted value, the fixed column for
    rows with a fixed one. (new source, (file line, lines) per table touched, problems)."""
    touched: dict[int, list[str]] = {}
    problems: list[Problem] = []
    for kind in ("reverted", "fixed"):
        by_key = {(v.group, v.case): getattr(v, kind) for v in values}
        rows, _, _ = parse_source(source, rel, arch_map)
        for row in rows:
            value = by_key.get((row.group, row.case))
            if value is not None:
                row.measured[arch] = value
        source, tables, found = fill_source(source, rel, rows, arch, kind == "reverted", arch_map)
        problems.extend(found)
        touched.update(dict(tables))
    return source, sorted(touched.items()), problems
