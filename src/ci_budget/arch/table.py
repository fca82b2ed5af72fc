"""Measured-value tables in docstrings: fixed-width and Markdown. Parse, render, edit. Pure.

Works on a list of text lines (a docstring split on newlines); positions are character columns
in those lines. Columns of a fixed-width table come from the header's character positions: a
cell belongs to the column whose header span it overlaps most (cells are often right-aligned
and wider than their header). See docs/arch-tables.md for the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ci_budget.models import ArchCell


class ArchTableError(ValueError):
    """A table that cannot be read or edited; the message says which line and why."""


NA_WORDS = frozenset({"n/a", "na", "-", "\u2014", "\u2013"})
_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUM_RE = re.compile(rf"{_NUM}\Z")
_VALUE_RE = re.compile(rf"{_NUM}(?:/{_NUM})*\Z")
_SM = r"sm[_ ]?\d{2,3}[a-z]?|gfx\d{3,4}[a-z]?"
_SM_RE = re.compile(r"(?:sm[_ ]?(\d{2,3})[a-z]?|(gfx\d{3,4}[a-z]?))\Z", re.I)
_RULE_RE = re.compile(r"\s*[-=+|: ]*[-=]{3,}[-=+|: ]*\Z")
# Column-group vocabulary. Checked on a column's own header text before any spanning label.
_REVERTED_RE = re.compile(r"\b(?:reverted|revert|without(?: the)? fix|bug|buggy)\b", re.I)
_FIXED_RE = re.compile(r"\b(?:in place|fixed|with(?: the)? fix)\b", re.I)
_MD_SEP_RE = re.compile(r":?-+:?\Z")

REVERTED, FIXED, LABEL, OTHER = "reverted", "fixed", "label", "other"


def is_value(word: str) -> bool:
    return word.lower() in NA_WORDS or bool(_VALUE_RE.match(word))


def parse_cell(raw: str) -> ArchCell | None:
    """`0.0`, `1e-9`, `a/b`, `n/a`, `-` or empty; None when the text is none of these."""
    text = raw.strip()
    if not text or text.lower() in NA_WORDS:
        return ArchCell(raw=text, na=True)
    parts = [p.strip() for p in text.split("/")]
    if not all(_NUM_RE.match(p) for p in parts):
        return None
    return ArchCell(raw=text, values=[float(p) for p in parts])


def format_value(value: float) -> str:
    """The sglang tables' style: `0.0` for zero, else three significant digits, `5.58e-07`."""
    return "0.0" if value == 0 else f"{value:.2e}"


# ---- architecture names ---------------------------------------------------------------


def arch_pattern(arch_map: dict[str, str]) -> re.Pattern:
    return _pattern(tuple(arch_map))


@lru_cache(maxsize=32)
def _pattern(names: tuple[str, ...]) -> re.Pattern:
    names = tuple(sorted(names, key=len, reverse=True))
    alts = [_SM] + [re.escape(n).replace(r"\ ", r"\s+") for n in names]
    return re.compile(r"(?<![\w(])(\(\s*)?(" + "|".join(alts) + r")(\s*\))?(?![\w])", re.I)


def normalize_arch(name: str, arch_map: dict[str, str]) -> str | None:
    """`SM90`, `sm_90a`, `H200` -> `sm90`; None when the name is not an architecture."""
    text = " ".join(name.strip().strip("()").split())
    m = _SM_RE.match(text)
    if m:
        return f"sm{m.group(1)}" if m.group(1) else m.group(2).lower()
    lowered = text.lower()
    arch = next((v for k, v in arch_map.items() if " ".join(k.lower().split()) == lowered), None)
    return normalize_arch(arch, {}) if arch else None


# ---- tokens ---------------------------------------------------------------------------


@dataclass
class Atom:
    start: int
    end: int
    text: str
    arch: str | None = None
    paren: bool = False


def _words(line: str, lo: int, hi: int, out: list[Atom]) -> None:
    for m in re.finditer(r"\S+", line[lo:hi]):
        out.append(Atom(lo + m.start(), lo + m.end(), m.group(0)))


def words(line: str) -> list[Atom]:
    out: list[Atom] = []
    _words(line, 0, len(line), out)
    return out


def atoms(line: str, pat: re.Pattern, arch_map: dict[str, str]) -> list[Atom]:
    """Words of a line, with architecture names (which may contain spaces) kept whole."""
    out: list[Atom] = []
    pos = 0
    for m in pat.finditer(line):
        _words(line, pos, m.start(), out)
        arch = normalize_arch(m.group(2), arch_map)
        out.append(Atom(m.start(), m.end(), m.group(0), arch, paren=bool(m.group(1))))
        pos = m.end()
    _words(line, pos, len(line), out)
    return out


def chunks(items: list[Atom]) -> list[list[Atom]]:
    """Runs of atoms separated by single spaces; two or more spaces separate columns."""
    out: list[list[Atom]] = []
    for a in items:
        if out and a.start - out[-1][-1].end < 2:
            out[-1].append(a)
        else:
            out.append([a])
    return out


def is_rule(line: str) -> bool:
    return bool(_RULE_RE.match(line))


# ---- parsed tables --------------------------------------------------------------------


@dataclass
class Segment:
    line: int  # index into the lines
    start: int
    end: int
    text: str
    archs: set[str] = field(default_factory=set)
    spanning: bool = False


@dataclass
class Column:
    start: int
    end: int
    label: str
    kind: str  # reverted / fixed / label / other
    arch: str | None = None


@dataclass
class ParsedRow:
    index: int  # line index
    group: str | None  # as written (None: carried down)
    case: str
    cells: dict[int, tuple[int, int, str]] = field(default_factory=dict)  # col -> span, raw


@dataclass
class Table:
    kind: str  # "fixed" or "markdown"
    first: int  # first header line index
    last: int  # last line index (inclusive)
    columns: list[Column]
    rows: list[ParsedRow]
    segments: list[Segment] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line index, message)

    def data_columns(self) -> list[int]:
        return [i for i, c in enumerate(self.columns) if c.kind in (REVERTED, FIXED)]


def _kind_of(own: str, above: str, archs: set[str]) -> str:
    for text in (own, above):
        if _REVERTED_RE.search(text):
            return REVERTED
        if _FIXED_RE.search(text):
            return FIXED
    return REVERTED if archs else LABEL


def _segments(line: str, idx: int, pat, arch_map) -> list[Segment]:
    """Header labels of one line; `SM100 (B200) SM90 (H200)` is two labels, not one."""
    out: list[Segment] = []
    for chunk in chunks(atoms(line, pat, arch_map)):
        groups: list[list[Atom]] = [[]]
        for a in chunk:
            cur = groups[-1]
            if a.arch and not a.paren and any(x.arch for x in cur):
                last = max(i for i, x in enumerate(cur) if x.arch)
                groups[-1], moved = cur[: last + 1], cur[last + 1 :]
                groups.append(moved)
            groups[-1].append(a)
        for g in groups:
            out.append(
                Segment(
                    idx,
                    g[0].start,
                    g[-1].end,
                    line[g[0].start : g[-1].end],
                    {a.arch for a in g if a.arch},
                )
            )
    return out


def _overlap(a0: int, a1: int, b0: int, b1: int) -> int:
    return min(a1, b1) - max(a0, b0)


def _header_columns(segs: list[Segment]) -> tuple[list[Column], list[str]]:
    problems: list[str] = []
    lines = sorted({s.line for s in segs})
    for s in segs:
        s.spanning = any(
            sum(1 for t in segs if t.line == ln and _overlap(s.start, s.end, t.start, t.end) > 0)
            >= 2
            for ln in lines
            if ln != s.line
        )
    leaves = [s for s in segs if not s.spanning]
    parent = list(range(len(leaves)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(leaves):
        for j in range(i):
            b = leaves[j]
            if a.line != b.line and _overlap(a.start, a.end, b.start, b.end) > 0:
                parent[find(i)] = find(j)
    groups: dict[int, list[Segment]] = {}
    for i, s in enumerate(leaves):
        groups.setdefault(find(i), []).append(s)
    columns = []
    for members in groups.values():
        members.sort(key=lambda s: s.line)
        start, end = min(s.start for s in members), max(s.end for s in members)
        above = [
            s
            for s in segs
            if s.spanning and s.line < members[0].line and _overlap(start, end, s.start, s.end) > 0
        ]
        own = " ".join(s.text for s in members)
        above_text = " ".join(s.text for s in above)
        archs = set().union(*(s.archs for s in members + above))
        label = f"{above_text} {own}".strip()
        arch = None
        if len(archs) > 1:
            problems.append(
                f"column '{label}' names two architectures ({', '.join(sorted(archs))})"
            )
        elif archs:
            arch = next(iter(archs))
        columns.append(Column(start, end, label, _kind_of(own, above_text, archs), arch))
    columns.sort(key=lambda c: c.start)
    return columns, problems


def _value_line(line: str, pat, arch_map) -> bool:
    """A row: some column after the first starts with a value (`0.0`, `n/a`, `a/b`)."""
    cs = chunks(atoms(line, pat, arch_map))
    return any(not c[0].arch and is_value(c[0].text) for c in cs[1:])


def _vocab_line(line: str, pat, arch_map) -> bool:
    return any(a.arch for a in atoms(line, pat, arch_map)) or bool(
        _REVERTED_RE.search(line) or _FIXED_RE.search(line)
    )


def _split_labels(words: list[Atom]) -> tuple[str | None, str]:
    parts = [" ".join(a.text for a in c) for c in chunks(words)]
    if len(parts) >= 2:
        return parts[0], " ".join(parts[1:])
    return None, parts[0] if parts else ""


def parse_fixed_block(lines: list[str], lo: int, hi: int, arch_map: dict[str, str]) -> Table | None:
    """lines[lo:hi] is one block of non-blank lines; a Table when it is a measured table."""
    pat = arch_pattern(arch_map)
    body = [i for i in range(lo, hi) if not is_rule(lines[i])]
    first_value = next((i for i in body if _value_line(lines[i], pat, arch_map)), None)
    if first_value is None:
        return None
    vocab = [i for i in body if i < first_value and _vocab_line(lines[i], pat, arch_map)]
    if not vocab or not any(a.arch for i in vocab for a in atoms(lines[i], pat, arch_map)):
        return None
    header = [i for i in body if i <= vocab[-1]]
    rows = [i for i in body if i > vocab[-1]]
    row_start = min(len(lines[i]) - len(lines[i].lstrip()) for i in rows)
    tabular = any(
        len(chunks(atoms(lines[i], pat, arch_map))) >= 2
        or len(lines[i]) - len(lines[i].lstrip()) > row_start
        for i in header
    )
    if not tabular:
        return None
    segs = [s for i in header for s in _segments(lines[i], i, pat, arch_map)]
    columns, col_problems = _header_columns(segs)
    table = Table("fixed", header[0], hi - 1, columns, [], segs)
    table.problems.extend((header[0], p) for p in col_problems)
    sinks = [i for i, c in enumerate(columns) if c.kind != LABEL]
    if not any(columns[i].kind in (REVERTED, FIXED) for i in sinks):
        table.problems.append((header[0], "header has no measured column"))
        return table
    first_sink = min(columns[i].start for i in sinks)
    for i in rows:
        table_row = _parse_fixed_row(lines[i], i, columns, sinks, first_sink, table.problems)
        if table_row is not None:
            table.rows.append(table_row)
    return table


def _parse_fixed_row(line, i, columns, sinks, first_sink, problems) -> ParsedRow | None:
    labels: list[Atom] = []
    cells: dict[int, list[Atom]] = {}
    ok = True
    for w in words(line):
        best = max(sinks, key=lambda c: _overlap(w.start, w.end, columns[c].start, columns[c].end))
        if _overlap(w.start, w.end, columns[best].start, columns[best].end) > 0:
            cells.setdefault(best, []).append(w)
        elif w.start >= first_sink:
            problems.append(
                (i, f"value '{w.text}' at column {w.start + 1} is outside every column")
            )
            ok = False
        else:
            labels.append(w)
    label_chunks = chunks(labels)
    if len(label_chunks) >= 2 and all(is_value(a.text) for a in label_chunks[-1]):
        text = " ".join(a.text for a in label_chunks[-1])
        problems.append((i, f"value '{text}' is left of every column"))
        ok = False
    group, case = _split_labels(labels)
    if not case:
        problems.append((i, "row has no case label"))
        ok = False
    row = ParsedRow(i, group, case)
    for c, ws in cells.items():
        raw = " ".join(w.text for w in ws)
        if columns[c].kind in (REVERTED, FIXED) and parse_cell(raw) is None:
            problems.append(
                (i, f"cell '{raw}' under '{columns[c].label}' is not a number, a/b, n/a or -")
            )
            ok = False
        row.cells[c] = (ws[0].start, ws[-1].end, raw)
    return row if ok else None


# ---- Markdown -------------------------------------------------------------------------


def _md_cells(line: str) -> list[tuple[int, int, str]]:
    """Interior spans of `| a | b |` cells (between the pipes)."""
    pipes = [m.start() for m in re.finditer(r"(?<!\\)\|", line)]
    return [(a + 1, b, line[a + 1 : b].strip()) for a, b in zip(pipes, pipes[1:], strict=False)]


def parse_markdown_block(lines, lo, hi, arch_map) -> Table | None:
    if hi - lo < 2 or not all(_md_cells(lines[i]) for i in range(lo, hi)):
        return None
    head, sep = _md_cells(lines[lo]), _md_cells(lines[lo + 1])
    if len(head) != len(sep) or not all(_MD_SEP_RE.match(t) for _, _, t in sep):
        return None
    pat = arch_pattern(arch_map)
    columns = []
    for s, e, text in head:
        archs = {a.arch for a in atoms(text, pat, arch_map) if a.arch}
        kind = _kind_of(text, "", archs)
        columns.append(Column(s, e, text, kind, next(iter(archs)) if len(archs) == 1 else None))
    if not any(c.arch for c in columns):
        return None
    table = Table("markdown", lo, hi - 1, columns, [])
    labels = [i for i, c in enumerate(columns) if c.kind == LABEL]
    named = {c.label.lower(): i for i, c in enumerate(columns) if c.kind == LABEL}
    case_col = next((named[n] for n in ("case", "test", "name") if n in named), None)
    group_col = next((named[n] for n in ("fix", "group", "pr", "id", "issue") if n in named), None)
    if case_col is None and labels:
        case_col = labels[-1]
    if group_col is None and len(labels) >= 2:
        group_col = labels[0]
    for i in range(lo + 2, hi):
        cells = _md_cells(lines[i])
        if len(cells) != len(columns):
            table.problems.append((i, f"row has {len(cells)} cells, the header {len(columns)}"))
            continue
        case = cells[case_col][2] if case_col is not None else ""
        group = cells[group_col][2] or None if group_col is not None else None
        if not case:
            table.problems.append((i, "row has no case label"))
            continue
        row = ParsedRow(i, group, case)
        bad = False
        for c, (s, e, raw) in enumerate(cells):
            if columns[c].kind in (REVERTED, FIXED) and parse_cell(raw) is None:
                table.problems.append(
                    (i, f"cell '{raw}' under '{columns[c].label}' is not a number, a/b, n/a or -")
                )
                bad = True
            if columns[c].kind != LABEL:
                row.cells[c] = (s, e, raw)
        if not bad:
            table.rows.append(row)
    return table


def parse_tables(text: str, arch_map: dict[str, str]) -> list[Table]:
    """Every measured table in a docstring (blocks separated by blank lines)."""
    lines = text.split("\n")
    tables = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        if any("\t" in lines[k] for k in range(i, j)):
            probe = [ln.expandtabs() for ln in lines[i:j]]
            if parse_fixed_block(probe, 0, len(probe), arch_map) is not None:
                tables.append(Table("fixed", i, j - 1, [], [], problems=[(i, "table has tabs")]))
        else:
            table = parse_markdown_block(lines, i, j, arch_map)
            if table is None and not lines[i].lstrip().startswith("|"):
                table = parse_fixed_block(lines, i, j, arch_map)
            if table is not None:
                tables.append(table)
        i = j
    return tables
