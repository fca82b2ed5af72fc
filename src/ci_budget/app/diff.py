"""Use case `diff`: the static budget report of a PR (est_time against the base; no GPU)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import (
    AppError,
    Sink,
    comment_mode_option,
    fail_on_option,
    format_option,
    kept,
    option,
    out_option,
    post_option,
    pr_option,
)
from ci_budget.models import RegistryScan

KIND = "budget"  # its own sticky comment, beside the measured `run` one


@dataclass
class DiffOptions:
    base: str = option(required=True, metavar="REF", help="the PR's base: est_time diff vs REF")
    history: Path | None = option(
        None, metavar="FILE",
        help="timing history: measured p90s beside est_time, and the seconds shards are "
        "predicted on where the partition model has none",
    )  # fmt: skip
    partition_model: Path | None = option(
        None, metavar="FILE",
        help="sglang-ci-stats model.json: shard counts and walls as sglang's CI plans them "
        "(missing or unreadable: a warning, then est_time)",
    )  # fmt: skip
    out: Path | None = out_option()
    format: str | None = format_option()
    fail_on: str = fail_on_option(
        "anything but never: exit 1 when a suite's risk is over or the PR adds registry errors"
    )
    post: bool = post_option()
    comment_mode: str = comment_mode_option()
    pr: int | None = pr_option()


def diff(settings, options: DiffOptions, sink: Sink | None = None) -> int:
    """Build, write and publish the static report; exit 1 on risk `over` or new registry errors
    unless `fail_on` is never."""
    from ci_budget.budget.verdict import static_news, static_verdict
    from ci_budget.render.diff_md import markdown

    sink = sink or Sink(settings)
    report = build(settings, options, sink)
    from ci_budget.render.blocks import blob_base

    env = settings.env
    md = markdown(report, blob=blob_base(env.server_url, env.repository, env.sha))
    as_json = report.model_dump_json(indent=2)
    sink.report_files(options.out, md, as_json)
    fmt = options.format or ("text" if sink.isatty() else "markdown")
    if fmt == "text":
        from ci_budget.render.text import diff_terminal

        text = diff_terminal(report)
    else:
        text = as_json if fmt == "json" else md
    sink.report(text, options.out, explicit=options.format is not None, wrap=fmt != "json")
    sink.flush()
    sink.summary(md)
    sink.outputs(
        {
            "budget-risk": report.risk,
            "verdict": static_verdict(report).level,
            "est-delta": f"{report.est_delta:+.0f}",
            "under-p90": len(report.under_p90),
            "report-path": "" if options.out is None else str(options.out),
        }
    )
    if options.post:
        sink.post(
            md,
            kind=KIND,
            pr=options.pr,
            what="the budget comment",
            where=kept(options.out),
            mode=options.comment_mode,
            news=static_news(report),
        )
    failing = report.risk == "over" or bool(report.errors_introduced)
    return 1 if options.fail_on != "never" and failing else 0


def build(settings, options: DiffOptions, sink: Sink | None = None):
    """The StaticReport of the working tree against `options.base`; AppError on bad input."""
    from ci_budget.app.numbers import plan_numbers
    from ci_budget.budget.diff import build_static
    from ci_budget.workspace.git import GitError, changed_files, list_files, resolve
    from ci_budget.workspace.scan import discover, scan_each

    root, config = settings.root, settings.config
    try:
        commit = resolve(root, options.base)
        base_files = list_files(root, commit, config)
        changed = changed_files(root, commit)
    except GitError as exc:
        raise AppError(f"--base {options.base}: {exc}") from None
    head_files = discover(root, config)
    # A file git says is unchanged since the base has the base's content in the working tree.
    unchanged = set(head_files).intersection(base_files).difference(changed)
    head = scan_each(root, head_files, config)
    base_scan = _base_scan(settings, commit, base_files, unchanged, head)
    arch_rows, arch_problems = _changed_table_rows(settings, changed)
    report = build_static(
        base_scan,
        merge_in_order(head, head_files),
        set(base_files),
        set(head_files),
        config,
        base_ref=options.base,
        base_commit=commit,
        arch_rows=arch_rows,
        arch_problems=arch_problems,
        numbers=plan_numbers(options.history, options.partition_model, sink or Sink(settings)),
    )
    report.arch_rows_before = _base_table_rows(settings, commit, changed)
    return report


def merge_in_order(scans: dict[str, RegistryScan], rels) -> RegistryScan:
    from ci_budget.registry.parse import merge

    return merge(scans[rel] for rel in rels if rel in scans)


def _base_scan(settings, commit, base_files: list[str], unchanged: set, head: dict):
    """The base's scan. Unchanged files' records are the head's: only the files the PR changed
    are read from git and parsed (a PR touches a handful of ~2,000)."""
    from ci_budget.registry.parse import scan_source
    from ci_budget.workspace.git import GitError, read_blobs

    root, config = settings.root, settings.config
    scans = {rel: head[rel] for rel in unchanged}
    todo = [rel for rel in base_files if rel not in scans]
    try:
        blobs = read_blobs(root, commit, todo)
    except GitError as exc:
        raise AppError(f"--base {commit}: {exc}") from None
    for rel, raw in blobs.items():
        scans[rel] = scan_source(raw, rel, config)
    return merge_in_order(scans, base_files)


def _changed_table_rows(settings, changed: list[str]) -> tuple[list, list]:
    """Guard-table rows and problems of the Python files changed since the base commit."""
    from ci_budget.workspace.files import guard_files

    root = settings.root
    files = [rel for rel in changed if rel.endswith(".py") and (root / rel).is_file()]
    return guard_files(root, files, settings.config)[:2]


def _base_table_rows(settings, commit: str, changed: list[str]) -> list:
    """The flagged guard rows the changed files had at the base: flags the PR did not bring."""
    from ci_budget.workspace.files import rows_at_commit

    py = [rel for rel in changed if rel.endswith(".py")]
    return rows_at_commit(settings.root, commit, py, settings.config)
