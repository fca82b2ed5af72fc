"""File names as a reader needs them in a narrow column: the shortest tail of the path that
tells it apart from the other files of the same report, linked to its line on the commit that
ran (the full path stays in the link). Pure."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from urllib.parse import quote

from ci_budget.render.escape import code

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
