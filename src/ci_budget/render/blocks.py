"""The building blocks every report shares: the one size-fitter, the one table formatter, and
file names for a narrow column. Pure.

Fitting: markdown that always fits a limit (65,536 characters for a PR comment). A document is a
fixed top and a list of `Part`s (a title, then items such as table rows). Every part is rendered
once and measured; parts are cut in priority order, lowest first and, among equals, the one
further down first, keeping a prefix of each cut part and a note saying how many items were
dropped. Parts of priority `NEVER` are not cut. Linear in the number of items. A part may leave
items unrendered (`unshown`) once those it has are over the limit by themselves: it is cut then
whatever else happens, to a prefix of what it has, so the result is the same. `cut` is the last
resort for any text: a hard cut with a note, still within the limit.

Sticky comments: the hidden marker on a comment's first line (`marker_for`, its one home) and the
comment text cut to GitHub's size limit.

Tables: aligned plain-text columns for terminals, and markdown table rows. Cells are escaped by
the caller's choice of `escape` function; this only lays them out.

File names: the shortest tail of the path that tells it apart from the other files of the same
report, linked to its line on the commit that ran (the full path stays in the link).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import quote

from ci_budget.render.escape import code, plain

# ==== Fitting to a limit ======================================================================

COMMENT_LIMIT = 65_536  # GitHub: "Body is too long (maximum is 65536 characters)"
NEVER = 99  # priority of parts that are never cut
T = TypeVar("T")


@dataclass
class Part:
    title: str = ""  # shown whenever the part has items
    head: str = ""  # shown when at least one item is kept (a table header, a fence)
    items: list[str] = field(default_factory=list)
    foot: str = ""  # shown when at least one item is kept
    priority: int = NEVER
    noun: str = "items"
    keep: int = -1  # -1: all
    unshown: int = 0  # items after `items`, not rendered (see the module's docstring)
    close: str = ""  # shown whenever the part has items, after the note (`</details>`)
    _prefix: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.unshown and self.priority == NEVER:  # it could never be cut to what it has
            raise ValueError("a part that is never cut must render all its items")

    def note(self, dropped: int) -> str:
        return f"\n_… {dropped:,} {self.noun} not shown (too long for one comment)._\n"

    def replace(self, items: list[str], head: str = "") -> None:
        """New items (and head), all kept."""
        self.items, self.head, self.keep, self._prefix = items, head, -1, []
        self.unshown = 0

    def prefix(self) -> list[int]:
        """Running total of item lengths (computed once per list of items)."""
        if not self._prefix:
            self._prefix = [0]
            for item in self.items:
                self._prefix.append(self._prefix[-1] + len(item))
        return self._prefix

    def count(self) -> int:
        return len(self.items) + self.unshown

    def size(self, keep: int | None = None) -> int:
        if not self.items:
            return 0
        n = self.count()
        keep = len(self.items) if keep is None else keep
        body = len(self.head) + self.prefix()[keep] + len(self.foot) if keep else 0
        note = len(self.note(n - keep)) if keep < n else 0
        return len(self.title) + body + note + len(self.close)

    def render(self) -> str:
        if not self.items:
            return ""
        n = self.count()
        keep = len(self.items) if self.keep < 0 else self.keep
        text = self.title
        if keep:
            text += self.head + "".join(self.items[:keep]) + self.foot
        if keep < n:
            text += self.note(n - keep)
        return text + self.close

    def shrink_to(self, room: int) -> int:
        """Keep the most items whose rendering (with its note) fits in `room`; the new size."""
        n = self.count()
        fixed = len(self.title) + len(self.head) + len(self.foot) + len(self.close)
        budget = room - fixed - len(self.note(n))
        keep = min(len(self.items), max(0, bisect.bisect_right(self.prefix(), budget) - 1))
        while keep > 0 and self.size(keep) > room:
            keep -= 1
        self.keep = keep
        return self.size(keep)


def rendered_until(
    render: Callable[[T], str], todo: Sequence[T], limit: int
) -> tuple[list[str], int]:
    """(the renderings of `todo`'s first items, how many were left unrendered): rendering stops
    once the rendered items alone are over `limit` (for a part that is not `NEVER`)."""
    out: list[str] = []
    size = 0
    for item in todo:
        if size > limit:
            break
        text = render(item)
        out.append(text)
        size += len(text)
    return out, len(todo) - len(out)


def fit_parts(top: str, parts: list[Part], limit: int) -> int:
    """Cut `parts` (in place) until `top` and their renderings fit `limit`; the total size
    (over `limit` only when the `NEVER` parts alone are too long)."""
    sizes = [p.size(None if p.keep < 0 else p.keep) for p in parts]  # as already cut
    total = len(top) + sum(sizes)
    order = sorted(
        (i for i, p in enumerate(parts) if p.priority != NEVER and p.items),
        key=lambda i: (parts[i].priority, -i),
    )
    for i in order:
        if total <= limit:
            break
        room = sizes[i] - (total - limit)
        new = parts[i].shrink_to(room) if room > 0 else parts[i].shrink_to(0)
        total += new - sizes[i]
        sizes[i] = new
    return total


def join(top: str, parts: list[Part], limit: int) -> str:
    return cut(top + "".join(p.render() for p in parts), limit)


CUT_NOTE = "\n…\n"


def cut(text: str, limit: int, note: str = CUT_NOTE) -> str:
    """`text` if it fits, else its start and `note`, `limit` characters at most."""
    if len(text) <= limit:
        return text
    if limit <= len(note):
        return text[:limit]
    return text[: limit - len(note)] + note


# ==== Sticky comments =========================================================================

STICKY_CUT_NOTE = (
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
    return cut(body, limit, STICKY_CUT_NOTE.format(limit=limit))


def with_marker(kind: str, body: str) -> str:
    """The comment text: the marker line, then the body (rendered reports carry it already)."""
    marker = marker_for(kind)
    return fit(body if first_line(body) == marker else f"{marker}\n{body}")


# ==== Tables ==================================================================================


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


# ==== File names ==============================================================================

_SHA = re.compile(r"[0-9a-f]{7,64}")


def short_names(paths: Iterable[str]) -> dict[str, str]:
    """path -> its last components, as few as make it unique among `paths`."""
    paths = sorted(set(paths))
    parts = {p: p.split("/") for p in paths}
    # How many paths end in each tail: one pass per tail length, not a pass per pair.
    tails: Counter[tuple[str, ...]] = Counter()
    for p in paths:
        for n in range(1, len(parts[p]) + 1):
            tails[tuple(parts[p][-n:])] += 1
    out: dict[str, str] = {}
    for p in paths:
        for n in range(1, len(parts[p]) + 1):
            tail = tuple(parts[p][-n:])
            if tails[tail] == 1:
                out[p] = "/".join(tail)
                break
        else:
            out[p] = p
    return out


def blob_base(server_url: str | None, repository: str | None, commit: str | None) -> str | None:
    """`https://github.com/OWNER/REPO/blob/SHA` when all three are known and well formed."""
    if not (server_url and repository and commit) or not _SHA.fullmatch(commit):
        return None
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        return None
    return f"{server_url.rstrip('/')}/{repository}/blob/{commit}"


def file_cell(path: str, line: int, short: str, blob: str | None) -> str:
    """The short name as code, linked to `path` at `line` when the commit is known. The path
    comes from a PR: percent-encoded into the URL, escaped as the link text."""
    text = code(short)
    if not blob or not line:
        return text
    return f"[{text}]({blob}/{quote(path, safe='/')}#L{line})"
