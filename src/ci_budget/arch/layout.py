"""A parsed measured table: its columns, rows and problems, and the header vocabulary. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_budget.arch.names import parse_cell

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
