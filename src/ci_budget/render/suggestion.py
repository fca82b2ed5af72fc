"""The `/verify-guard` answer: a review suggestion that replaces a guard's table with the filled
one, or, where GitHub cannot take a suggestion on those lines, the table in a comment.

Everything shown comes from the pull request (file, labels, refs) or from a GPU run of its
code, so it passes through `escape`; the suggested lines are the file's own lines with numbers
written into them, fenced with more backticks than they hold.
"""

from __future__ import annotations

from ci_budget.render.escape import block_line, code, fence_for, md


def _head(verification) -> str:
    refs = ", ".join(code(r, cell=False) for r in verification.reverted) or "no fix"
    group = f" (rows of {md(verification.group)})" if verification.group else ""
    return (
        f"ci-budget `guard verify` on {md(verification.arch)}: {refs} reverted{group}, "
        "then the unreverted tree; this architecture's columns filled from the two runs."
    )


def _flags(verification) -> str:
    rows = verification.flagged
    if not rows:
        return "\nEvery row now shows its fix on this architecture.\n"
    items = "".join(
        f"- {md(' '.join(filter(None, [r.group, r.case])))}: {md(', '.join(r.flags))}\n"
        for r in rows
    )
    return f"\nStill flagged on {md(verification.arch)}:\n{items}"


def suggestion_body(verification, lines: list[str]) -> str:
    """A review comment whose suggestion block replaces the commented lines with `lines`."""
    fence = fence_for(lines)
    block = "\n".join(block_line(line) for line in lines)
    return f"{_head(verification)}\n\n{fence}suggestion\n{block}\n{fence}\n{_flags(verification)}"


def table_comment(verification, first_line: int, lines: list[str], why: str) -> str:
    """The same table as a plain comment, when the lines cannot take a suggestion."""
    fence = fence_for(lines)
    block = "\n".join(block_line(line) for line in lines)
    where = f"{code(verification.file, cell=False)} line {first_line}"
    return (
        f"{_head(verification)}\n\nThe filled table for {where} ({md(why)}):\n\n"
        f"{fence}text\n{block}\n{fence}\n{_flags(verification)}"
    )
