"""Which triggers a repository's own workflows already answer, read from their text: a comment
command (`/rerun-test` on `issue_comment`) and a gating label (`run-ci` checked among a pull
request's labels). ci-budget's defaults step aside from them, so a comment or a label never
starts the same GPU run twice (docs/adopting.md). Workflows that use ci-budget are not counted.
Pure: the caller passes the texts."""

from __future__ import annotations

import re

OWN_COMMAND = "/ci-budget-run"  # ci-budget's command where the repository has /rerun-test
OWN_LABEL = "ci-budget-run"  # and its gating label where the repository gates on run-ci


def _ours(text: str) -> bool:
    return bool(re.search(r"uses:\s*[\w.-]+/ci-budget@|uses:\s*\./\s*$", text, re.MULTILINE))


def handles_command(texts: dict[str, str], command: str = "/rerun-test") -> list[str]:
    """The workflows that answer `command` in a comment."""
    return sorted(
        path
        for path, text in texts.items()
        if "issue_comment" in text and f"'{command}'" in text and not _ours(text)
    )


def gates_on_label(texts: dict[str, str], label: str = "run-ci") -> list[str]:
    """The workflows that check for `label` among a pull request's labels."""
    pattern = re.compile(rf"label[^\n]*['\"]{re.escape(label)}['\"]", re.IGNORECASE)
    return sorted(p for p, t in texts.items() if pattern.search(t) and not _ours(t))
