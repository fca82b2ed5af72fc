"""The one escaping layer: text from results, artifacts or a PR's files shown as inert data.

Every string that did not come from ci-budget itself (failure messages, test ids, paths, suite
names, GPU names, runner configs, class names, table cells from docstrings) passes through one of
these before it reaches markdown or a terminal:

- `md(text)`: markdown text (a table cell, a list item, a paragraph). HTML-escaped; `\\`, `` ` ``,
  `*`, `_`, `~`, `[`, `]`, `|` and a leading block marker backslash-escaped; single line.
- `html(text)`: text inside raw HTML (`<summary>`); HTML-escaped, single line.
- `code(text)`: an inline code span fenced with more backticks than any run inside.
- `plain(text)`: a single line for a terminal or a fenced block: no control characters.

GitHub turns `@name`, `#12`, `owner/repo#12`, `GH-12` and bare URLs into mentions and links even
in escaped text, so `md` and `html` put a zero-width space (`&#8203;`, the entity Dependabot uses
for the same purpose) after `@`, after a `#` or `GH-` before a digit, inside `://` and after
`www`: the text reads the same and GitHub renders nothing live. No function here can produce the
`<!-- ci-budget:… -->` marker: `<` is escaped, and in code `<!--` gets a zero-width space.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"
ZWSP_ENTITY = "&#8203;"

# C0/C1 controls (\r, \n, \t, ESC, ...) and Unicode line/paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u0085]+")
# Inline markdown syntax; `_` only where it could open or close emphasis (not inside a word).
_MD_SPECIAL = re.compile(r"[\\`*~\[\]|]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# What may start a block when the text begins a line: heading, list, setext underline.
_BLOCK_START = re.compile(r"^(?:[#+\-=]|\d{1,9}[.)])")  # `>` becomes `&gt;`
# GitHub references and autolinks: mentions, issues, `GH-1`, URLs, `www.`; e-mail via the `@`.
_REFS = re.compile(r"@|#(?=[0-9A-Za-z])|(?i:gh-)(?=\d)|:(?=//)|(?i:www)(?=\.)")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_HTML_RE = re.compile(r"[&<>]")


def plain(text: object) -> str:
    """`text` on one line: each run of control characters (newline, `\\r`, tab, ESC) is a space."""
    return _CONTROL.sub(" ", str(text))


def _html_escape(text: str) -> str:
    return _HTML_RE.sub(lambda m: _HTML[m.group()], text)


def _defuse_refs(text: str) -> str:
    return _REFS.sub(lambda m: m.group() + ZWSP_ENTITY, text)


def html(text: object) -> str:
    """Text for inside raw HTML (a `<summary>`): escaped, single line, no mentions or links."""
    return _defuse_refs(_html_escape(plain(text)))


def md(text: object) -> str:
    """Text for a markdown table cell, list item or paragraph, rendered literally."""
    line = plain(text).strip()
    line = _MD_SPECIAL.sub(lambda m: "\\" + m.group(), line)
    line = _BLOCK_START.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], line, count=1)
    return _defuse_refs(_html_escape(line))


def code(text: object, cell: bool = True) -> str:
    """`text` as an inline code span; `cell`: it sits in a table, so `|` is escaped."""
    line = plain(text).replace("<!--", "<" + ZWSP + "!--")
    if not line.strip():
        return ""
    longest = max((len(run) for run in re.findall(r"`+", line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or line[0] == " " or line[-1] == " " else ""
    if cell:
        line = line.replace("|", "\\|")
    return f"{fence}{pad}{line}{pad}{fence}"


def fence_for(lines: list[str]) -> str:
    """A code-block fence longer than any backtick run in `lines` (at least three)."""
    longest = max((len(run) for text in lines for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def block_line(text: object) -> str:
    """A line inside a fenced code block: single line, and no `<!--` to forge a marker."""
    return plain(text).replace("<!--", "<" + ZWSP + "!--")
