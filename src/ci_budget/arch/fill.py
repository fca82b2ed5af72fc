"""Writing measured tables: values put into a file's existing tables, keeping the layout. Pure:
source in, source out.

A value goes right-aligned at its column's right edge; only when it does not fit is the column
widened, by inserting spaces into every line of the table at the column's left edge (a spanning
header label is shifted so it still covers its columns). Every edit is checked by parsing the
result again; an edit that would change the table's meaning is refused with ArchTableError.
"""

from __future__ import annotations

from collections import Counter

from ci_budget.arch.docstrings import file_line, parse_source
from ci_budget.arch.layout import (
    FIXED,
    LABEL,
    REVERTED,
    ArchTableError,
    Segment,
    Table,
    chunks,
    format_value,
    words,
)
from ci_budget.arch.table import parse_fixed_block, parse_tables
from ci_budget.models import ArchRow, Problem

# ==== One value into an existing table ========================================================


def _shape(table: Table, skip: tuple[int, int] | set[tuple[int, int]] | None = None):
    skips = skip if isinstance(skip, set) else {skip}
    cols = [(c.kind, c.arch) for c in table.columns]
    rows = []
    for r in table.rows:
        cells = {
            c: raw
            for c, (_, _, raw) in r.cells.items()
            if (r.index, c) not in skips and table.columns[c].kind != LABEL
        }
        rows.append((r.index, r.group, r.case, cells))
    return cols, rows, len(table.problems)


def set_cell(
    lines: list[str], table: Table, row_index: int, col: int, text: str, arch_map: dict[str, str]
) -> list[str]:
    """A copy of `lines` with the cell (row line, column) replaced by `text`."""
    row = next(r for r in table.rows if r.index == row_index)
    if table.kind == "markdown":
        new = _set_markdown(lines, row, col, text)
    else:
        new, _ = _set_fixed(lines, table, row, col, text, arch_map)
    if _misread(new, table, {(row_index, col): text}, arch_map):
        raise ArchTableError(
            f"line {row_index + 1}: cannot put '{text}' under '{table.columns[col].label}' "
            "without changing how the table reads; widen the column by hand"
        )
    return new


def set_cells(
    lines: list[str], table: Table, edits: dict[tuple[int, int], str], arch_map: dict[str, str]
) -> list[str]:
    """`set_cell` for many cells (row line, column) -> text at once, the table parsed again
    once to check them all (and once per widening), not once per cell: a 20,000-row table takes
    its values in one pass. ArchTableError when the result reads differently; `set_cell` one at
    a time then names the cell."""
    new, current = list(lines), table
    rows = {r.index: r for r in current.rows}
    for (row_index, col), text in edits.items():
        if current.kind == "markdown":
            new = _set_markdown(new, rows[row_index], col, text)
            continue
        new, fresh = _set_fixed(new, current, rows[row_index], col, text, arch_map)
        if fresh is not current:  # widened: every position after the column moved
            current, rows = fresh, {r.index: r for r in fresh.rows}
    if _misread(new, table, edits, arch_map):
        raise ArchTableError("the values do not fit the table as one edit")
    return new


def _misread(new: list[str], table: Table, edits: dict[tuple[int, int], str], arch_map) -> bool:
    """Whether `new` no longer reads as `table` with exactly `edits` made."""
    check = [t for t in parse_tables("\n".join(new), arch_map) if t.first == table.first]
    if not check or _shape(check[0], set(edits)) != _shape(table, set(edits)):
        return True
    after = {r.index: r for r in check[0].rows}
    return any(
        row not in after or after[row].cells.get(col, (0, 0, ""))[2] != text
        for (row, col), text in edits.items()
    )


def _set_markdown(lines, row, col, text) -> list[str]:
    s, e, _ = row.cells[col]
    line = lines[row.index]
    width = e - s
    inner = f" {text.rjust(width - 2)} " if len(text) + 2 <= width else f" {text} "
    new = list(lines)
    new[row.index] = line[:s] + inner + line[e:]
    return new


def _column_right(table: Table, col: int) -> int:
    ends = Counter(r.cells[col][1] for r in table.rows if col in r.cells)
    return ends.most_common(1)[0][0] if ends else table.columns[col].end


def _set_fixed(lines, table: Table, row, col, text, arch_map) -> tuple[list[str], Table]:
    """The lines with the cell set, and the table they read as (a new parse if widened)."""
    line = lines[row.index]
    old = row.cells.get(col)
    right = old[1] if old else _column_right(table, col)
    if old:
        line = line[: old[0]] + " " * (old[1] - old[0]) + line[old[1] :]
    before = [w.end for w in words(line) if w.end <= right]
    limit = (max(before) + 2) if before else 0
    need = limit - (right - len(text))
    new = list(lines)
    if need > 0:
        new = _widen(new, table, col, need)
        fresh = parse_fixed_block(new, table.first, table.last + 1, arch_map)
        again = next((r for r in fresh.rows if r.index == row.index), None) if fresh else None
        if fresh is None or again is None:
            raise ArchTableError(f"line {row.index + 1}: widening the column broke the table")
        return _set_fixed(new, fresh, again, col, text, arch_map)
    line = line.ljust(right)
    new[row.index] = (line[: right - len(text)] + text + line[right:]).rstrip()
    return new, table


def _widen(lines: list[str], table: Table, col: int, k: int) -> list[str]:
    c = table.columns[col]
    left = min([c.start] + [r.cells[col][0] for r in table.rows if col in r.cells])
    header = {s.line for s in table.segments}
    new = list(lines)
    for i in range(table.first, table.last + 1):
        line = new[i]
        if len(line) <= left:
            continue
        items: list[tuple[int, int, Segment | None]]
        if i in header:
            items = [(s.start, s.end, s) for s in table.segments if s.line == i]
        else:
            items = [(ch[0].start, ch[-1].end, None) for ch in chunks(words(line))]
        at: int | None = left
        for s, e, seg in items:
            if s < left < e:
                at = e
                if seg is not None and seg.spanning:
                    j = _shift(table, seg, left, k)
                    line = line[:s] + " " * j + line[s:e] + " " * (k - j) + line[e:]
                    at = None
                break
        if at is not None:
            fill = "-" if line[at - 1 : at + 1] == "--" else " "
            line = line[:at] + fill * k + line[at:]
        new[i] = line
    return new


def _shift(table: Table, seg, left: int, k: int) -> int:
    """How far to move a spanning label right so it still touches every column it spans."""
    covered = [c for c in table.columns if c.end > seg.start and c.start < seg.end]
    lo, hi = 0, k
    for c in covered:
        if c.start >= left:
            lo = max(lo, c.start + k - seg.end + 1)
        else:
            hi = min(hi, c.end - seg.start - 1)
    return (lo + hi) // 2 if lo <= hi else k // 2


# ==== A file's values =========================================================================


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
        pairs = ((r, by_line.get((rel, file_line(line_map, r.index)))) for r in table.rows)
        found = [(r, row) for r, row in pairs if row is not None and arch in row.measured]
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
