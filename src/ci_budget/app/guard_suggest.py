"""Use case `guard suggest`: answer a `/verify-guard` with the filled table as a review
suggestion on the guard's docstring lines, so a maintainer accepts it with one click.

It runs with a write token on trusted code, after the GPU job ran the PR's code, so it trusts
nothing from that job but numbers: the verification file is validated, the table is refilled
here from the file's text at the pinned commit (read from GitHub), and only if that commit is
the one the plan pinned. Where GitHub refuses a suggestion (the lines are outside the PR's diff)
the table goes into a plain comment instead.

The comment bodies (last section) show text from the pull request (file, labels, refs) or from
a GPU run of its code, so it passes through `render.escape`; the suggested lines are the file's
own lines with numbers written into them, fenced with more backticks than they hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import AppError, Sink, option
from ci_budget.render.escape import block_line, code, fence_for, md


@dataclass
class GuardSuggestOptions:
    verification: Path = option(
        required=True, metavar="FILE", help="verification.json of guard verify --results-dir"
    )
    pr: int = option(required=True, help="pull request number")
    sha: str = option(required=True, help="the commit the plan pinned (head-sha)")
    dry_run: bool = option(False, help="print the comment, post nothing")
    file: str | None = option(
        None, metavar="FILE",
        help="the guard file the plan verified: the verification must name it (the artifact "
        "comes from a job that ran the PR's code)",
    )  # fmt: skip


def guard_suggest(settings, options: GuardSuggestOptions, sink: Sink | None = None,
                  client=None) -> int:  # fmt: skip
    """Post (or with `dry_run` only print) each table's comment."""
    sink = sink or Sink(settings)
    for body in suggest_bodies(settings, options, client):
        sink.echo(body)
    return 0


def suggest_bodies(settings, options: GuardSuggestOptions, client=None) -> list[str]:
    """The comment bodies posted (or that would be, with `dry_run`)."""
    from pydantic import ValidationError

    from ci_budget.arch.fill import fill_values
    from ci_budget.models import GuardVerification

    try:
        saved = GuardVerification.model_validate_json(options.verification.read_bytes())
    except (OSError, ValidationError) as exc:
        raise AppError(f"{options.verification}: not a guard verification: {exc}") from None
    if saved.commit != options.sha:
        raise AppError(f"{options.verification}: measured at {str(saved.commit)[:12]}, not at the "
                       f"pinned {options.sha[:12]}; nothing posted")  # fmt: skip
    _check_file(options, saved.file)
    client = client or _client(settings)
    from ci_budget.workspace.git import repo_path

    path = repo_path(settings.root, saved.file)
    source = client.file_text(path, options.sha)
    amap = settings.config.gpu_arch_map()
    new, tables, problems = fill_values(source, saved.file, saved.values, saved.arch, amap)
    if problems:
        raise AppError("; ".join(str(p) for p in problems))
    return [_post(client, options, saved, path, new, first, len(lines)) for first, lines in tables]


def _check_file(options: GuardSuggestOptions, file: str) -> None:
    """The artifact's file is a plain repository path (it goes into an API URL with a write
    token) and, with `--file`, the very file the plan verified."""
    from ci_budget.registry.specs import check_spec, show

    why = check_spec(file)
    if why is None and (file.startswith("/") or ".." in file.split("/") or "::" in file):
        why = "not a repository path"
    if why:
        raise AppError(f"{options.verification}: file {show(file)}: {why}; nothing posted")
    if options.file is not None and file != options.file:
        raise AppError(f"{options.verification}: measures {show(file)}, not the verified "
                       f"{show(options.file)}; nothing posted")  # fmt: skip


def _post(client, options, saved, path: str, new_source: str, first: int, count: int) -> str:
    from ci_budget.github.retry import GitHubError

    lines = new_source.split("\n")[first - 1 : first - 1 + count]
    body = suggestion_body(saved, lines)
    if options.dry_run:
        return body
    try:
        client.review_comment(options.pr, options.sha, path, first, first + count - 1, body)
    except GitHubError as exc:
        if exc.status != 422:
            raise
        body = table_comment(saved, first, lines, "GitHub takes suggestions only on changed lines")
        client.create_comment(options.pr, body)
    return body


def _client(settings):
    from ci_budget.github.client import client_from_env
    from ci_budget.github.retry import GitHubError

    try:
        return client_from_env(settings.env.values, token=settings.token, config=settings.config)
    except GitHubError as exc:
        raise AppError(f"guard suggest: {exc.message}") from None


# --- comment bodies: a review suggestion, or the table in a plain comment


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
