"""Sticky comment text (pure): the hidden marker on the first line and GitHub's size limit."""

from __future__ import annotations

import re

from ci_budget.render.blocks import COMMENT_LIMIT, cut

CUT_NOTE = (
    "\n\n_(cut at GitHub's {limit}-character comment limit; the full report is in the step "
    "summary and the results artifact)_\n"
)


def marker_for(kind: str) -> str:
    if not re.fullmatch(r"[\w.-]+", kind):
        raise ValueError(f"sticky comment kind {kind!r}: use letters, digits, '.', '_' or '-'")
    return f"<!-- ci-budget:{kind} -->"


def first_line(text: str | None) -> str:
    return (text or "").split("\n", 1)[0].strip()


def fit(body: str, limit: int = COMMENT_LIMIT) -> str:
    """`body` cut to `limit` characters with a note saying where the rest is."""
    return cut(body, limit, CUT_NOTE.format(limit=limit))


def with_marker(kind: str, body: str) -> str:
    """The comment text: the marker line, then the body (rendered reports carry it already)."""
    marker = marker_for(kind)
    return fit(body if first_line(body) == marker else f"{marker}\n{body}")
