"""The one size-fitter: markdown that always fits a limit (65,536 characters for a PR comment).

A document is a fixed top and a list of `Part`s (a title, then items such as table rows). Every
part is rendered once and measured; parts are cut in priority order, lowest first and, among
equals, the one further down first, keeping a prefix of each cut part and a note saying how many
items were dropped. Parts of priority `NEVER` are not cut. Linear in the number of items.
A part may leave items unrendered (`unshown`) once those it has are over the limit by themselves:
it is cut then whatever else happens, to a prefix of what it has, so the result is the same.
`cut` is the last resort for any text: a hard cut with a note, still within the limit.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

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
