"""The sticky-comment protocol (edge): one comment per kind and PR, kept by list, edit, create and
delete through a `GitHubClient`, safe against reporters racing each other.

The REST API has no compare-and-swap for comments, so every step re-reads what it depends on:
a create is followed by a list that keeps the oldest of ours; a comment that vanished between two
steps (another reporter deleted its duplicate, a person deleted it) is listed again, not an error.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ci_budget.github.retry import GitHubError
from ci_budget.render.sticky import CUT_NOTE, fit_section, marker_for, merge_body, parse_sections

if TYPE_CHECKING:
    from ci_budget.github.client import GitHubClient

RELIST = 3  # lists after a create that found none of ours, before creating again


class StickyResult(BaseModel):
    comment_id: int
    action: str  # created / updated / unchanged
    calls: int = 0  # API requests this upsert made


def upsert(
    client: GitHubClient, number: int, kind: str, body: str, section: str | None = None
) -> StickyResult:
    """Update our `kind` comment on #number in place, or create it.

    Cost with a known identity and <= 100 comments: list + update = 2 calls (1 when the body
    is unchanged); a create is list + create + list = 3, plus one delete per duplicate a
    racing reporter left and one update to merge into the oldest. Sections add two lists,
    `settle` seconds apart, to check ours survived concurrent writers (see `_verify`).
    """
    start = client.calls
    marker = marker_for(kind)
    ours = client.ours(number, marker)
    action, target = "updated", None
    if ours:
        target = ours[0]
        text = merge_body(kind, body, section, [c.body for c in ours])
        if text == target.body and len(ours) == 1:
            return StickyResult(
                comment_id=target.id, action="unchanged", calls=client.calls - start
            )
        try:
            client.edit(target, text)
        except GitHubError as exc:
            if exc.status != 404:
                raise
            target = None  # deleted between our list and our edit: create it again
        else:
            for duplicate in ours[1:]:
                client.delete(duplicate)
    if target is None:
        action = "created"
        target = _create_settled(client, number, kind, body, section)
    if section is not None:
        _verify(client, number, kind, body, section)
    return StickyResult(comment_id=target.id, action=action, calls=client.calls - start)


def _create_settled(client: GitHubClient, number: int, kind: str, body: str, section: str | None):
    """Create ours, then keep the oldest of ours, delete the rest, re-apply our body to it.

    When the list after a create shows none of ours (a racing reporter deleted ours as its
    duplicate and then its own vanished, or a person deleted it), list again; after RELIST
    empty lists, create again. Only a comment that keeps vanishing is an error."""
    for _attempt in range(3):
        mine = client.create(number, merge_body(kind, body, section, [])).id
        for relist in range(RELIST):
            if relist:
                client.sleep(random.uniform(0.05, 0.2) * relist)
            ours = client.ours(number, marker_for(kind))
            if ours:
                return _keep_oldest(client, number, mine, ours, kind, body, section)
    raise GitHubError(f"the {kind} comment on #{number} kept vanishing right after it was created")


def _keep_oldest(
    client: GitHubClient,
    number: int,
    mine: int,
    ours: list,
    kind: str,
    body: str,
    section: str | None,
):
    survivor = ours[0]
    for duplicate in ours[1:]:
        client.delete(duplicate)
    text = merge_body(kind, body, section, [c.body for c in ours])
    if survivor.id != mine and text != survivor.body:
        try:
            client.edit(survivor, text)
        except GitHubError as exc:
            if exc.status != 404:
                raise
            return _create_settled(client, number, kind, body, section)
    return survivor


def _verify(client: GitHubClient, number: int, kind: str, body: str, section: str) -> None:
    """Read back until our section has stayed in the one surviving comment for `settle` s.

    A writer that read before our write can still overwrite it. Such in-flight writes land
    within a request's latency, so a section seen twice, `settle` seconds apart, has survived.
    """
    want = fit_section(body)
    seen = False
    for attempt in range(12):
        if seen:
            client.sleep(client.settle)
        elif attempt:  # writers collided: back off by a random amount so one of them wins
            client.sleep(random.uniform(0, min(0.05 * 2**attempt, 2.0)))
        ours = client.ours(number, marker_for(kind))
        if ours and len(ours) == 1:
            found = parse_sections(kind, ours[0].body).get(section)
            if found == want or (found is None and CUT_NOTE[:20] in ours[0].body):
                if seen:
                    return  # ours is there (or was cut away by the length limit)
                seen = True
                continue
        seen = False
        if not ours:
            client.create(number, merge_body(kind, body, section, []))
            continue
        for duplicate in ours[1:]:
            client.delete(duplicate)
        try:
            client.edit(ours[0], merge_body(kind, body, section, [c.body for c in ours]))
        except GitHubError as exc:
            if exc.status != 404:  # vanished between list and edit: the next list sees it
                raise
    raise GitHubError(
        f"section {section!r} of the {kind} comment on #{number} kept being overwritten"
    )
