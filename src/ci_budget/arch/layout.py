"""Words and shape of a measured table. Pure.

The words: cell values, architecture names, and the atoms a line splits into (positions are
character columns in a line; two or more spaces separate columns). The shape: a parsed table's
columns, rows and problems, and the header vocabulary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ci_budget.models import ArchCell

# ==== Words: cell values, architecture names, atoms ===========================================

NA_WORDS = frozenset({"n/a", "na", "-", "\u2014", "\u2013"})
_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUM_RE = re.compile(rf"{_NUM}\Z")
_VALUE_RE = re.compile(rf"{_NUM}(?:/{_NUM})*\Z")
_SM = r"sm[_ ]?\d{2,3}[a-z]?|gfx\d{3,4}[a-z]?"
_SM_RE = re.compile(r"(?:sm[_ ]?(\d{2,3})[a-z]?|(gfx\d{3,4}[a-z]?))\Z", re.I)
_RULE_RE = re.compile(r"\s*[-=+|: ]*[-=]{3,}[-=+|: ]*\Z")


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


def is_rule(line: str) -> bool:
    return bool(_RULE_RE.match(line))


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


# ---- atoms ----------------------------------------------------------------------------


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


# ==== The parsed shape: columns, rows, problems ===============================================

REVERTED, FIXED, LABEL, OTHER = "reverted", "fixed", "label", "other"
# Column-group vocabulary. Checked on a column's own header text before any spanning label.
_REVERTED_RE = re.compile(r"\b(?:reverted|revert|without(?: the)? fix|bug|buggy)\b", re.I)
_FIXED_RE = re.compile(r"\b(?:in place|fixed|with(?: the)? fix)\b", re.I)


class ArchTableError(ValueError):
    """A table that cannot be read or edited; the message says which line and why."""


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

    @property
    def measured(self) -> bool:
        return self.kind in (REVERTED, FIXED)


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


def kind_of(own: str, above: str, archs: set[str]) -> str:
    """A column's kind from its own header text, else the spanning label above it."""
    for text in (own, above):
        if _REVERTED_RE.search(text):
            return REVERTED
        if _FIXED_RE.search(text):
            return FIXED
    return REVERTED if archs else LABEL


def has_vocabulary(text: str) -> bool:
    return bool(_REVERTED_RE.search(text) or _FIXED_RE.search(text))


def overlap(a0: int, a1: int, b0: int, b1: int) -> int:
    return min(a1, b1) - max(a0, b0)


def bad_cell(column: Column, raw: str) -> str | None:
    """The problem with a measured column's cell text, or None."""
    if column.measured and parse_cell(raw) is None:
        return f"cell '{raw}' under '{column.label}' is not a number, a/b, n/a or -"
    return None
