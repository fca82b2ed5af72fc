"""Writing measured tables: render new ones, and put one value into an existing one. Pure.

Editing keeps the layout: a value goes right-aligned at its column's right edge; only when it
does not fit is the column widened, by inserting spaces into every line of the table at the
column's left edge (a spanning header label is shifted so it still covers its columns). Every
edit is checked by parsing the result again; an edit that would change the table's meaning is
refused with ArchTableError.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ci_budget.arch.table import (
    FIXED,
    LABEL,
    REVERTED,
    ArchTableError,
    Table,
    chunks,
    parse_fixed_block,
    parse_tables,
    words,
)


@dataclass
class Spec:
    """A column to render: kind is reverted or fixed; arch_label like `SM90 (H200)` or None."""

    kind: str
    arch_label: str | None = None


GAP = 3


def render_fixed(
    columns: list[Spec],
    rows: list[tuple[str | None, str, list[str]]],
    indent: int = 2,
    two_level: bool = True,
    label_headers: bool = False,
) -> list[str]:
    """Lines of a fixed-width table; rows are (group shown on this row or None, case, cells)."""
    groups = [g or "" for g, _, _ in rows]
    gw = max((len(g) for g in groups), default=0)
    cw = max([len(c) for _, c, _ in rows] + ([4] if label_headers else []))
    if label_headers:
        gw = max(gw, 3) if gw else 0
    case_x = indent + (gw + GAP if gw else 0)
    bottom, top = [], []
    for spec in columns:
        if not two_level:
            word = "reverted" if spec.kind == REVERTED else "fixed"
            bottom.append(f"{word} {spec.arch_label}" if spec.arch_label else word)
            top.append(None)
        elif spec.kind == FIXED and spec.arch_label is None:
            bottom.append("in place")
            top.append("fix")
        else:
            bottom.append(spec.arch_label or "")
            top.append(None)
    widths = [
        max([len(bottom[k]), len(top[k] or "")] + [len(cells[k]) for _, _, cells in rows])
        for k in range(len(columns))
    ]
    spans = _spans(columns) if two_level else []
    for k0, k1, text in spans:  # make room for spanning labels wider than their columns
        room = sum(widths[k0 : k1 + 1]) + GAP * (k1 - k0)
        if room < len(text):
            widths[k1] += len(text) - room
    starts, x = [], case_x + cw + GAP
    for w in widths:
        starts.append(x)
        x += w + GAP
    lines = []
    if two_level and (spans or any(top)):
        line = ""
        for k0, k1, text in spans:
            x0, text = _span_place(starts, widths, bottom, k0, k1, text)
            line = _put(line, x0, text)
        for k, t in enumerate(top):
            if t:
                line = _put(line, starts[k] + widths[k] - len(t), t)
        lines.append(line)
    head = ""
    if label_headers:
        head = _put(head, indent, "fix") if gw else head
        head = _put(head, case_x, "case")
    for k, text in enumerate(bottom):
        head = _put(head, starts[k] + widths[k] - len(text), text)
    lines.append(head)
    for group, case, cells in rows:
        line = _put("", indent, group) if group else ""
        line = _put(line, case_x, case)
        for k, cell in enumerate(cells):
            line = _put(line, starts[k] + widths[k] - len(cell), cell)
        lines.append(line.rstrip())
    return [ln.rstrip() for ln in lines]


def _spans(columns: list[Spec]) -> list[tuple[int, int, str]]:
    """Runs of reverted columns (with an arch) get one `fix reverted` label over them."""
    out, k = [], 0
    while k < len(columns):
        if columns[k].kind == REVERTED:
            j = k
            while j + 1 < len(columns) and columns[j + 1].kind == REVERTED:
                j += 1
            out.append((k, j, "fix reverted"))
            k = j + 1
        else:
            k += 1
    return out


def _span_place(starts, widths, bottom, k0, k1, text) -> tuple[int, str]:
    """Where a spanning label goes: it must overlap the first and the last column's header
    label (both right-aligned), else it would read as the label of one column only. When it
    is too short for that, it is padded with dashes: `--- fix reverted ---`."""
    first_end = starts[k0] + widths[k0]
    last_start = starts[k1] + widths[k1] - len(bottom[k1])
    need = last_start - first_end + 2
    if k1 > k0 and len(text) < need:
        pad = need - len(text)
        text = "-" * (pad // 2 + 1) + " " + text + " " + "-" * (pad - pad // 2 + 1)
    lo_s, hi_e = starts[k0], starts[k1] + widths[k1]
    s = max(lo_s, lo_s + (hi_e - lo_s - len(text)) // 2)
    if k1 > k0:
        s = max(min(s, first_end - 1), last_start - len(text) + 1)
    return s, text


def _put(line: str, x: int, text: str) -> str:
    line = line.ljust(x)
    return line[:x] + text + line[x + len(text) :]


def render_markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max([len(h), 3] + [len(r[k]) for r in rows]) for k, h in enumerate(header)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for r in rows:
        out.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return out


# ---- editing --------------------------------------------------------------------------


def _shape(table: Table, skip: tuple[int, int] | None = None):
    cols = [(c.kind, c.arch) for c in table.columns]
    rows = []
    for r in table.rows:
        cells = {
            c: raw
            for c, (_, _, raw) in r.cells.items()
            if (r.index, c) != skip and table.columns[c].kind != LABEL
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
        new = _set_fixed(lines, table, row, col, text, arch_map)
    check = [t for t in parse_tables("\n".join(new), arch_map) if t.first == table.first]
    after = next((r for r in check[0].rows if r.index == row_index), None) if check else None
    if (
        not check
        or _shape(check[0], (row_index, col)) != _shape(table, (row_index, col))
        or after is None
        or after.cells.get(col, (0, 0, ""))[2] != text
    ):
        raise ArchTableError(
            f"line {row_index + 1}: cannot put '{text}' under '{table.columns[col].label}' "
            "without changing how the table reads; widen the column by hand"
        )
    return new


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


def _set_fixed(lines, table: Table, row, col, text, arch_map) -> list[str]:
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
        if again is None:
            raise ArchTableError(f"line {row.index + 1}: widening the column broke the table")
        return _set_fixed(new, fresh, again, col, text, arch_map)
    line = line.ljust(right)
    new[row.index] = (line[: right - len(text)] + text + line[right:]).rstrip()
    return new


def _widen(lines: list[str], table: Table, col: int, k: int) -> list[str]:
    c = table.columns[col]
    left = min([c.start] + [r.cells[col][0] for r in table.rows if col in r.cells])
    header = {s.line for s in table.segments}
    new = list(lines)
    for i in range(table.first, table.last + 1):
        line = new[i]
        if len(line) <= left:
            continue
        if i in header:
            items = [(s.start, s.end, s) for s in table.segments if s.line == i]
        else:
            items = [(ch[0].start, ch[-1].end, None) for ch in chunks(words(line))]
        at = left
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
