"""Measured-value tables in docstrings: fixed-width and Markdown. Parse. Pure.

Works on a list of text lines (a docstring split on newlines); positions are character columns
in those lines. See docs/arch-tables.md for the format; `fixed` and `markdown` hold the two
layouts, `names` the words and `layout` the parsed shape.
"""

from __future__ import annotations

from ci_budget.arch.fixed import parse_fixed_block
from ci_budget.arch.layout import Table
from ci_budget.arch.markdown import parse_markdown_block


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
