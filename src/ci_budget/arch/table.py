"""Measured-value tables in docstrings: fixed-width and Markdown. Parse. Pure.

Works on a list of text lines (a docstring split on newlines); positions are character columns
in those lines. See docs/arch-tables.md for the format; `layout` holds the words and the parsed
shape.

Fixed-width tables, as sglang writes them in guard docstrings: columns come from the header's
character positions; a cell belongs to the column whose header span it overlaps most (cells are
often right-aligned and wider than their header). A header label that overlaps two or more
labels of another header line spans them (`fix reverted` over `SM100 (B200)` and `SM90
(H200)`); the others are leaves, and leaves on different lines that overlap form one column.

Markdown tables (`| fix | case | SM100 | SM90 | fixed |`): the case column is the label column
named `case`, `test` or `name`, else the last label column; the group column is the one named
`fix`, `group`, `pr`, `id` or `issue`, else the first of two or more label columns.
"""

from __future__ import annotations

import re

from ci_budget.arch.layout import (
    LABEL,
    Atom,
    Column,
    ParsedRow,
    Segment,
    Table,
    arch_pattern,
    atoms,
    bad_cell,
    chunks,
    has_vocabulary,
    is_rule,
    is_value,
    kind_of,
    overlap,
    words,
)

# ==== Both layouts ============================================================================


def _blocks(lines: list[str]):
    """(first, end) of each run of non-blank lines."""
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        yield i, j
        i = j


def parse_tables(text: str, arch_map: dict[str, str]) -> list[Table]:
    """Every measured table in a docstring (blocks separated by blank lines)."""
    lines = text.split("\n")
    tables = []
    for i, j in _blocks(lines):
        if any("\t" in lines[k] for k in range(i, j)):
            probe = [ln.expandtabs() for ln in lines[i:j]]
            if parse_fixed_block(probe, 0, len(probe), arch_map) is not None:
                tables.append(Table("fixed", i, j - 1, [], [], problems=[(i, "table has tabs")]))
            continue
        table = parse_markdown_block(lines, i, j, arch_map)
        if table is None and not lines[i].lstrip().startswith("|"):
            table = parse_fixed_block(lines, i, j, arch_map)
        if table is not None:
            tables.append(table)
    return tables


# ==== Fixed-width tables ======================================================================


def parse_fixed_block(lines: list[str], lo: int, hi: int, arch_map: dict[str, str]) -> Table | None:
    """lines[lo:hi] is one block of non-blank lines; a Table when it is a measured table."""
    pat = arch_pattern(arch_map)
    split = _split_header(lines, lo, hi, pat, arch_map)
    if split is None:
        return None
    header, rows = split
    segs = [s for i in header for s in _segments(lines[i], i, pat, arch_map)]
    columns, col_problems = _header_columns(segs)
    table = Table("fixed", header[0], hi - 1, columns, [], segs)
    table.problems.extend((header[0], p) for p in col_problems)
    sinks = [i for i, c in enumerate(columns) if c.kind != LABEL]
    if not any(columns[i].measured for i in sinks):
        table.problems.append((header[0], "header has no measured column"))
        return table
    for i in rows:
        row = _parse_row(lines[i], i, columns, sinks, table.problems)
        if row is not None:
            table.rows.append(row)
    return table


def _split_header(lines, lo, hi, pat, arch_map) -> tuple[list[int], list[int]] | None:
    """(header line indexes, row line indexes), or None when the block is not a table: the
    header is every line up to the last one naming an architecture or a column group before
    the first row of values, and it must be laid out in columns."""
    body = [i for i in range(lo, hi) if not is_rule(lines[i])]
    line_atoms = {i: atoms(lines[i], pat, arch_map) for i in body}
    first_value = next((i for i in body if _value_line(line_atoms[i])), None)
    if first_value is None:
        return None
    vocab = [
        i
        for i in body
        if i < first_value and (any(a.arch for a in line_atoms[i]) or has_vocabulary(lines[i]))
    ]
    if not any(a.arch for i in vocab for a in line_atoms[i]):
        return None
    header = [i for i in body if i <= vocab[-1]]
    rows = [i for i in body if i > vocab[-1]]
    row_indent = min(_indent(lines[i]) for i in rows)
    tabular = any(len(chunks(line_atoms[i])) >= 2 or _indent(lines[i]) > row_indent for i in header)
    return (header, rows) if tabular else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _value_line(items: list[Atom]) -> bool:
    """A row: some column after the first starts with a value (`0.0`, `n/a`, `a/b`)."""
    return any(not c[0].arch and is_value(c[0].text) for c in chunks(items)[1:])


# ---- header ---------------------------------------------------------------------------


def _segments(line: str, idx: int, pat: re.Pattern, arch_map) -> list[Segment]:
    """Header labels of one line; `SM100 (B200) SM90 (H200)` is two labels, not one."""
    out: list[Segment] = []
    for chunk in chunks(atoms(line, pat, arch_map)):
        for g in _split_at_archs(chunk):
            text = line[g[0].start : g[-1].end]
            out.append(Segment(idx, g[0].start, g[-1].end, text, {a.arch for a in g if a.arch}))
    return out


def _split_at_archs(chunk: list[Atom]) -> list[list[Atom]]:
    """A second bare architecture name starts a new label; a parenthesised one (`(H200)`)
    belongs to the label before it."""
    groups: list[list[Atom]] = [[]]
    for a in chunk:
        cur = groups[-1]
        if a.arch and not a.paren and any(x.arch for x in cur):
            last = max(i for i, x in enumerate(cur) if x.arch)
            groups[-1], moved = cur[: last + 1], cur[last + 1 :]
            groups.append(moved)
        groups[-1].append(a)
    return groups


def _header_columns(segs: list[Segment]) -> tuple[list[Column], list[str]]:
    _mark_spanning(segs)
    problems: list[str] = []
    columns = [_column(members, segs, problems) for members in _stacks(segs)]
    columns.sort(key=lambda c: c.start)
    return columns, problems


def _mark_spanning(segs: list[Segment]) -> None:
    for s in segs:
        others = {t.line for t in segs if t.line != s.line}
        s.spanning = any(
            sum(1 for t in segs if t.line == ln and overlap(s.start, s.end, t.start, t.end) > 0)
            >= 2
            for ln in others
        )


def _stacks(segs: list[Segment]) -> list[list[Segment]]:
    """Leaf labels grouped into columns: leaves on different lines that overlap, transitively."""
    stacks: list[list[Segment]] = []
    for s in (s for s in segs if not s.spanning):
        touching = [
            st
            for st in stacks
            if any(t.line != s.line and overlap(s.start, s.end, t.start, t.end) > 0 for t in st)
        ]
        merged = [s] + [t for st in touching for t in st]
        stacks = [st for st in stacks if st not in touching] + [merged]
    for st in stacks:
        st.sort(key=lambda s: (s.line, s.start))
    return stacks


def _column(members: list[Segment], segs: list[Segment], problems: list[str]) -> Column:
    start, end = min(s.start for s in members), max(s.end for s in members)
    above = [
        s
        for s in segs
        if s.spanning and s.line < members[0].line and overlap(start, end, s.start, s.end) > 0
    ]
    own = " ".join(s.text for s in members)
    above_text = " ".join(s.text for s in above)
    archs = set().union(*(s.archs for s in members + above))
    label = f"{above_text} {own}".strip()
    if len(archs) > 1:
        problems.append(f"column '{label}' names two architectures ({', '.join(sorted(archs))})")
    arch = next(iter(archs)) if len(archs) == 1 else None
    return Column(start, end, label, kind_of(own, above_text, archs), arch)


# ---- rows -----------------------------------------------------------------------------


def _parse_row(line: str, i: int, columns, sinks, problems) -> ParsedRow | None:
    first_sink = min(columns[c].start for c in sinks)
    labels: list[Atom] = []
    cells: dict[int, list[Atom]] = {}
    errors: list[str] = []
    for w in words(line):
        best = max(sinks, key=lambda c: overlap(w.start, w.end, columns[c].start, columns[c].end))
        if overlap(w.start, w.end, columns[best].start, columns[best].end) > 0:
            cells.setdefault(best, []).append(w)
        elif w.start >= first_sink:
            errors.append(f"value '{w.text}' at column {w.start + 1} is outside every column")
        else:
            labels.append(w)
    label_chunks = chunks(labels)
    if len(label_chunks) >= 2 and all(is_value(a.text) for a in label_chunks[-1]):
        errors.append(
            f"value '{' '.join(a.text for a in label_chunks[-1])}' is left of every column"
        )
    group, case = _split_labels(label_chunks)
    if not case:
        errors.append("row has no case label")
    row = ParsedRow(i, group, case)
    for c, ws in cells.items():
        raw = " ".join(w.text for w in ws)
        errors.extend(p for p in [bad_cell(columns[c], raw)] if p)
        row.cells[c] = (ws[0].start, ws[-1].end, raw)
    problems.extend((i, e) for e in errors)
    return None if errors else row


def _split_labels(label_chunks: list[list[Atom]]) -> tuple[str | None, str]:
    parts = [" ".join(a.text for a in c) for c in label_chunks]
    if len(parts) >= 2:
        return parts[0], " ".join(parts[1:])
    return None, parts[0] if parts else ""


# ==== Markdown tables =========================================================================

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
