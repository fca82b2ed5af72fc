"""The one table formatter: aligned plain-text columns for terminals, and markdown table rows.

Cells are escaped by the caller's choice of `escape` function; this module only lays them out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ci_budget.render.escape import plain


def aligned(
    rows: Iterable[Sequence[object]], right: Iterable[int] = (), indent: str = "", gap: str = "  "
) -> list[str]:
    """Rows as lines with columns padded to the widest cell; `right`: right-aligned columns.
    Cells are made single-line, so a newline in data cannot shift the columns."""
    table = [[plain(c) for c in row] for row in rows]
    if not table:
        return []
    right = set(right)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    out = []
    for row in table:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append((indent + gap.join(cells)).rstrip())
    return out


def aligned_text(rows: Iterable[Sequence[object]], right: Iterable[int] = ()) -> str:
    """`aligned` joined into text with a final newline ("" for no rows)."""
    lines = aligned(rows, right)
    return "\n".join(lines) + "\n" if lines else ""


def md_head(columns: Sequence[str], right: Iterable[int] = ()) -> str:
    """A markdown table header (trusted column names) with its alignment row."""
    right = set(right)
    rule = ["--:" if i in right else "---" for i in range(len(columns))]
    return md_row(columns) + "|" + "|".join(rule) + "|\n"


def md_row(cells: Sequence[str]) -> str:
    """One markdown table row of already escaped cells (see `escape.md` / `escape.code`)."""
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|\n"
