"""The sticky-comment protocol (edge): one comment per kind and PR, kept by list, edit, create and
delete through a `GitHubClient`, safe against reporters racing each other.

The REST API has no compare-and-swap for comments, so every step re-reads what it depends on:
a create is followed by a list that keeps the oldest of ours; a comment that vanished between two
steps (another reporter deleted its duplicate, a person deleted it) is listed again, not an error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ci_budget.github.client import GitHubClient
from ci_budget.github.retry import GitHubError
from ci_budget.render.blocks import marker_for, with_marker

RELIST = 3  # lists after a create that found none of ours, before creating again


@dataclass
class StickyResult:
    comment_id: int
    action: str  # created / updated / unchanged / not created (`create` False, none of ours)
    calls: int = 0  # API requests this upsert made


def upsert(
    client: GitHubClient, number: int, kind: str, body: str, *, create: bool = True
) -> StickyResult:
    """Update our `kind` comment on #number in place, or create it (only when `create`: the
    comment mode `changes` updates one that exists, so a fix shows, and adds none).

    Cost with a known identity and <= 100 comments: list + update = 2 calls (1 when the body
    is unchanged); a create is list + create + list = 3, plus one delete per duplicate a
    racing reporter left and one update to merge into the oldest.
    """
    start = client.calls
    text = with_marker(kind, body)
    ours = client.ours(number, marker_for(kind))
    action, target = "updated", None
    if ours:
        target = ours[0]
        if text == target.body and len(ours) == 1:
            return StickyResult(target.id, "unchanged", client.calls - start)
        if _edit(client, target, text):
            for duplicate in ours[1:]:
                client.delete(duplicate)
        else:
            target = None  # deleted between our list and our edit: create it again
    if target is None and not create:
        return StickyResult(0, "not created", client.calls - start)
    if target is None:
        action = "created"
        target = _create_settled(client, number, kind, text)
    return StickyResult(target.id, action, client.calls - start)


def _edit(client: GitHubClient, comment, text: str) -> bool:
    """Edit `comment`; False when it is gone (404)."""
    try:
        client.edit(comment, text)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        return False
    return True


def _create_settled(client: GitHubClient, number: int, kind: str, text: str):
    """Create ours, then keep the oldest of ours, delete the rest, put our text in it.

    When the list after a create shows none of ours (a racing reporter deleted ours as its
    duplicate and then its own vanished, or a person deleted it), list again; after RELIST
    empty lists, create again. Only a comment that keeps vanishing is an error."""
    for _attempt in range(3):
        mine = client.create_comment(number, text)
        for relist in range(RELIST):
            if relist:
                client.sleep(random.uniform(0.05, 0.2) * relist)
            ours = client.ours(number, marker_for(kind))
            if not ours:
                continue
            survivor = ours[0]
            for duplicate in ours[1:]:
                client.delete(duplicate)
            if survivor.id == mine or text == survivor.body or _edit(client, survivor, text):
                return survivor
            break  # the survivor vanished before our edit: create again
    raise GitHubError(f"the {kind} comment on #{number} kept vanishing right after it was created")


def upsert_issue(client: GitHubClient, title: str, label: str, marker: str, body: str):
    """Edit our one open `label` issue whose body starts with `marker` in place, or open it.
    Returns (issue number, created / updated / unchanged). Duplicates a racing run left stay
    open for a person to close; the oldest is the one edited."""
    ours = client.our_issues(label, marker)
    if not ours:
        return client.create_issue(title, body, label), "created"
    target = ours[0]
    if target.body == body:
        return target.number, "unchanged"
    client.edit_issue(target, body)
    return target.number, "updated"


def upsert_pull(client: GitHubClient, branch: str, base: str, title: str, body: str):
    """Edit our one open pull request from `branch` into `base` in place, or open it.
    Returns (number, created / updated / unchanged)."""
    pr = client.open_pull_from(branch, base)
    if pr is None:
        return client.create_pull(branch, base, title, body), "created"
    if pr.body == body:
        return pr.number, "unchanged"
    client.edit_pull(pr, body)
    return pr.number, "updated"
