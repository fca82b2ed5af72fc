"""Words of a measured table: cell values, architecture names, and the atoms a line splits into.

Pure. Positions are character columns in a line; two or more spaces separate columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ci_budget.models import ArchCell

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
