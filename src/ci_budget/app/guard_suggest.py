"""Use case `guard suggest`: answer a `/verify-guard` with the filled table as a review
suggestion on the guard's docstring lines, so a maintainer accepts it with one click.

It runs with a write token on trusted code, after the GPU job ran the PR's code, so it trusts
nothing from that job but numbers: the verification file is validated, the table is refilled
here from the file's text at the pinned commit (read from GitHub), and only if that commit is
the one the plan pinned. Where GitHub refuses a suggestion (the lines are outside the PR's diff)
the table goes into a plain comment instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import AppError, Sink, option


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
    from ci_budget.render.suggestion import suggestion_body, table_comment

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
