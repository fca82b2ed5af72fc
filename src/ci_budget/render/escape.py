"""The one escaping layer: text from results, artifacts or a PR's files shown as inert data.

Every string that did not come from ci-budget itself (failure messages, test ids, paths, suite
names, GPU names, runner configs, class names, table cells from docstrings) passes through one of
these before it reaches markdown or a terminal:

- `md(text)`: markdown text (a table cell, a list item, a paragraph). HTML-escaped; `\\`, `` ` ``,
  `*`, `_`, `~`, `[`, `]`, `|` and a leading block marker backslash-escaped; single line.
- `html(text)`: text inside raw HTML (`<summary>`); HTML-escaped, single line.
- `code(text)`: an inline code span fenced with more backticks than any run inside.
- `plain(text)`: a single line for a terminal or a fenced block: no control characters.
- `inline(text)`: a line of ci-budget's own markdown (a reply, a notice, a step summary) whose
  `code spans` are its own and whose other text may hold anything: inert outside the spans.
- `log_text(text)`: text for a job log (many lines): no line reads as a workflow command.

Bidirectional and invisible code points (U+202E, U+2066, U+200B, U+FEFF, the tag characters,
...) are shown as `<U+202E>` by every function here, never applied: a name cannot reorder or
hide what a reader sees (Trojan Source), and the text stays as long as it was.

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


# Format characters (Unicode category Cf, as of Unicode 14-15: bidi controls, zero-width spaces
# and joiners, BOM, tag characters, ...; U+13439-1343F joined Cf in 15), and the blank letters
# and the joiner that render as nothing. tests/render/test_escape_layer.py checks this against the
# running Python's `unicodedata`.
_HIDDEN = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f\u034f\u115f\u1160\u3164\uffa0]"
)


def visible(text: object) -> str:
    """`text` with each bidi or invisible code point written as `<U+XXXX>`."""
    text = str(text)
    if text.isascii():  # the common case, and a fast one on megabytes of report
        return text
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def plain(text: object) -> str:
    """`text` on one line: each run of control characters (newline, `\\r`, tab, ESC) is a space;
    bidi and invisible code points are shown (`visible`)."""
    return visible(_CONTROL.sub(" ", str(text)))


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


def inline(text: object) -> str:
    """One line of ci-budget's markdown: its `code spans` (single backticks, as `registry.specs
    .show` and the trigger write them) stay code, holding no marker; everything between them is
    `md`, so a directory name or a registration string there is never a mention, link, image or
    HTML. An unpaired backtick is text."""
    parts = plain(text).split("`")
    if len(parts) % 2 == 0:  # odd number of backticks: the last one has no partner
        parts[-2:] = ["\\`".join(parts[-2:])]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append("`" + part.replace("<!--", "<" + ZWSP + "!--") + "`")
        else:
            out.append(_inline_text(part))
    return "".join(out)


def _inline_text(text: str) -> str:
    """`md` for text between code spans; its spaces at either end are kept (they separate it
    from the spans), and the unpaired backtick `inline` escaped is not escaped twice."""
    if not text.strip():
        return text
    lead = text[: len(text) - len(text.lstrip())]
    tail = text[len(text.rstrip()) :]
    pieces = text.strip().split("\\`")
    return lead + "\\`".join(md(p) if p.strip() else p for p in pieces) + tail


# --- job logs ------------------------------------------------------------------------------
# The runner cuts a step's output at `\n`, `\r` and `\r\n`. A line is a workflow command when
# it starts with `::` after leading blanks (.NET TrimStart: whitespace, not U+200B), or when
# `##[` stands anywhere in it (the runner's older parser searches the whole line).
_LINE_END = re.compile(r"\r\n|\r|\n")
_COMMAND_START = re.compile(r"\s*::")


def log_line(line: str) -> str:
    """One line for a job log: bidi and invisible code points shown, `##[` broken by a
    zero-width space wherever it stands, and a zero-width space in front of a line that would
    start with `::` (`::` elsewhere is no command, and node ids `a.py::Class` keep it)."""
    line = visible(line)
    if "##[" in line:
        line = line.replace("##[", "#" + ZWSP + "#[")
    return ZWSP + line if _COMMAND_START.match(line) else line


def log_text(text: str) -> str:
    """`text` safe to print in a job log: every `\r` ends a line as the runner would read it,
    and no line reads as a workflow command (`log_line`)."""
    # Without a `\r`, lines end only at `\n`: str.split is the same cut, many times faster on
    # the megabytes of a report's JSON copy.
    lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
    return "\n".join(log_line(line) for line in lines)
