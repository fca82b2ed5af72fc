"""Use case `report --report-json FILE`: publish a report that a job without a write token made
(a `pull_request` run of a fork, the shards of an existing stage job), from a job that has one
(`workflow_run`). The file is untrusted data: it must validate as a ci-budget report of the
kind asked for (a size cap first), and it is rendered again here, so every text in it goes
through the one escaping layer; none of its markdown is posted. The pull request is never
taken from the file: `--pr`, else the event's, and for `workflow_run` the open pull request
whose head is the run's `head_sha` on its `head_repository` (GitHub's API, by head branch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import AppError, Sink

MAX_BYTES = 32 * 1024 * 1024  # a 100,000-test report is ~20 MB
SHA = re.compile(r"[0-9a-f]{40}")


@dataclass
class PostJsonOptions:
    path: Path
    kind: str = "run"  # "run": a run report; "budget": the static report
    pr: int | None = None
    post: bool = False
    out: Path | None = Path("ci-budget-report.md")  # None: the step summary only
    comment_mode: str = "changes"  # report --comment-mode


def load_report(path: Path, kind: str):
    """The report in `path`, validated as `kind`; AppError in one line otherwise."""
    from pydantic import ValidationError

    from ci_budget.budget.diff import StaticReport
    from ci_budget.models import Report

    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise AppError(f"{path}: {size} bytes; a report is at most {MAX_BYTES}")
        text = path.read_bytes()
    except OSError as exc:
        raise AppError(f"{path}: {exc.strerror}") from None
    model = StaticReport if kind == "budget" else Report
    try:
        report = model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise AppError(f"{path}: not a ci-budget {kind} report: {where}: {first['msg']}") from None
    if report.kind != kind:
        raise AppError(f"{path}: a {report.kind!r} report, not {kind!r}")
    return report


def run_head(settings) -> tuple[str, str, str] | None:
    """(head repository, head branch, head SHA) of a workflow_run event, or None."""
    if settings.event_name != "workflow_run":
        return None
    run = settings.event().get("workflow_run")
    if not isinstance(run, dict):
        raise AppError("workflow_run event without a workflow_run object")
    repo = (run.get("head_repository") or {}).get("full_name")
    branch, sha = run.get("head_branch"), run.get("head_sha")
    if not (isinstance(repo, str) and isinstance(branch, str) and isinstance(sha, str)):
        raise AppError("workflow_run: head_repository, head_branch or head_sha missing")
    if not SHA.fullmatch(sha):
        raise AppError(f"workflow_run: head_sha {sha[:60]!r} is not a commit SHA")
    return repo, branch, sha


def _pull(settings, head: tuple[str, str, str] | None) -> int:
    from ci_budget.github.client import client_from_env
    from ci_budget.github.retry import GitHubError

    if head is None:
        return settings.pr_number()
    repo, branch, sha = head
    try:
        client = client_from_env(settings.env.values, token=settings.token, config=settings.config)
        number = client.pull_for_head(repo, branch, sha)
    except GitHubError as exc:
        raise AppError(str(exc)) from None
    if number is None:
        raise AppError(f"no open pull request has {sha[:12]} at the head of {repo}:{branch}")
    return number


def post_json(settings, options: PostJsonOptions, sink: Sink | None = None) -> int:
    from ci_budget.render.paths import blob_base

    sink = sink or Sink(settings)
    report = load_report(options.path, options.kind)
    head = run_head(settings)
    env = settings.env
    commit = head[2] if head else env.sha
    blob = blob_base(env.server_url, env.repository, commit)
    if options.kind == "budget":
        from ci_budget.budget.verdict import static_news
        from ci_budget.render.diff_md import markdown as budget_markdown

        md, news = budget_markdown(report, blob=blob), static_news(report)
    else:
        from ci_budget.budget.verdict import run_news
        from ci_budget.render.run_md import markdown

        md, news = markdown(report, blob=blob), run_news(report)
    sink.report_files(options.out, md, report.model_dump_json(indent=2))
    sink.summary(md)
    out = "" if options.out is None else str(options.out)
    sink.outputs({"report-path": out})
    if options.post and options.comment_mode != "off":
        number = options.pr if options.pr is not None else _pull(settings, head)
        sink.post(md, kind=options.kind, pr=number, what="the comment",
                  where=out or "the step summary", mode=options.comment_mode,
                  news=news)  # fmt: skip
    elif options.post:
        sink.echo(f"ci-budget: comment-mode off: no {options.kind} comment posted")
    elif out:
        sink.echo(f"report: {out}")
    return 0
