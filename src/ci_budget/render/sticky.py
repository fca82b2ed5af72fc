"""Sticky comment text (pure): the hidden marker, the size limit, and sections that several
reporters merge into one comment."""

from __future__ import annotations

import re

from ci_budget.render.fit import COMMENT_LIMIT, cut

MAX_BODY = COMMENT_LIMIT
CUT_NOTE = (
    "\n\n_(cut at GitHub's {limit}-character comment limit; the full report is in the step "
    "summary and the results artifact)_\n"
)


class StickyError(ValueError):
    """A kind or section name that cannot be used in a marker."""


def marker_for(kind: str) -> str:
    if not re.fullmatch(r"[\w.-]+", kind):
        raise StickyError(f"sticky comment kind {kind!r}: use letters, digits, '.', '_' or '-'")
    return f"<!-- ci-budget:{kind} -->"


def first_line(text: str | None) -> str:
    return (text or "").split("\n", 1)[0].strip()


def fit(body: str, limit: int = MAX_BODY) -> str:
    """`body` cut to `limit` characters with a note saying where the rest is."""
    return cut(body, limit, CUT_NOTE.format(limit=limit))


def fit_section(body: str) -> str:
    return body.strip("\n")


def _section_re(kind: str) -> re.Pattern[str]:
    k = re.escape(kind)
    return re.compile(
        rf"<!-- ci-budget:{k}:section:([\w.-]+) -->\n(.*?)\n<!-- ci-budget:{k}:end:\1 -->", re.S
    )


def parse_sections(kind: str, text: str | None) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _section_re(kind).finditer(text or "")}


def merge_body(kind: str, body: str, section: str | None, existing: list[str | None]) -> str:
    """The comment text: marker line, then our body, or every known section with ours replaced.

    `existing` are bodies of our comments (oldest first); sections found in any of them are kept,
    so merging duplicates loses nothing.
    """
    marker = marker_for(kind)
    if section is None:
        if first_line(body) == marker:  # rendered reports carry the marker already
            return fit(body)
        return fit(f"{marker}\n{body}")
    if not re.fullmatch(r"[\w.-]+", section):
        raise StickyError(
            f"sticky comment section {section!r}: use letters, digits, '.', '_' or '-'"
        )
    sections: dict[str, str] = {}
    for text in reversed(existing):  # the oldest wins a name clash: it is the one being edited
        sections.update(parse_sections(kind, text))
    sections[section] = fit_section(body)
    blocks = [
        f"<!-- ci-budget:{kind}:section:{name} -->\n{sections[name]}\n<!-- ci-budget:{kind}:end:{name} -->"
        for name in sorted(sections)
    ]
    return fit(marker + "\n" + "\n\n".join(blocks))
