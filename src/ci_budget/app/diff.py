"""Use case `diff`: the static budget report of a PR (est_time against the base; no GPU)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.sink import Sink

KIND = "budget"  # its own sticky comment, beside the measured `run` one


@dataclass
class DiffOptions:
    base: str
    history: Path | None = None
    out: Path = Path("ci-budget-report.md")
    format: str | None = None  # markdown / terminal / json; None: terminal on a tty
    fail_on: str = "never"
    post: bool = False
    pr: int | None = None


def diff(settings, options: DiffOptions, sink: Sink | None = None) -> int:
    """Build, write and publish the static report; exit 1 on risk `over` or new registry errors
    unless `fail_on` is never."""
    from ci_budget.render.diff_md import markdown

    sink = sink or Sink(settings)
    report = build(settings, options)
    from ci_budget.render.paths import blob_base

    env = settings.env
    md = markdown(report, blob=blob_base(env.server_url, env.repository, env.sha))
    as_json = report.model_dump_json(indent=2)
    sink.report_files(options.out, md, as_json)
    fmt = options.format or ("terminal" if sink.isatty() else "markdown")
    if fmt == "terminal":
        from ci_budget.render.diff_text import terminal

        text = terminal(report)
    else:
        text = as_json if fmt == "json" else md
    sink.report(text, options.out, explicit=options.format is not None, wrap=fmt != "json")
    sink.flush()
    sink.summary(md)
    sink.outputs(
        {
            "budget-risk": report.risk,
            "est-delta": f"{report.est_delta:+.0f}",
            "report-path": str(options.out),
        }
    )
    if options.post:
        sink.post(
            md,
            kind=KIND,
            pr=options.pr,
            what="the budget comment",
            where=f"report: {options.out}",
        )
    failing = report.risk == "over" or bool(report.errors_introduced)
    return 1 if options.fail_on != "never" and failing else 0


def build(settings, options: DiffOptions):
    """The StaticReport of the working tree against `options.base`; AppError on bad input."""
    from ci_budget.budget.diff import build_static
    from ci_budget.registry.parse import merge, scan_source
    from ci_budget.workspace.git import GitError, files_at
    from ci_budget.workspace.scan import discover, scan_files

    root, config = settings.root, settings.config
    try:
        commit, blobs = files_at(root, options.base, config)
    except GitError as exc:
        raise AppError(f"--base {options.base}: {exc}") from None
    base_scan = merge(scan_source(data, rel, config) for rel, data in sorted(blobs.items()))
    head_files = discover(root, config)
    head_scan = scan_files(root, head_files, config)
    history = _history(options.history)
    notes: list[str] = []
    arch_rows, arch_problems = _changed_table_rows(settings, commit, notes)
    return build_static(
        base_scan,
        head_scan,
        set(blobs),
        set(head_files),
        config,
        base_ref=options.base,
        base_commit=commit,
        history=history,
        arch_rows=arch_rows,
        arch_problems=arch_problems,
        extra_notes=notes,
    )


def _history(path: Path | None):
    if path is None:
        return None
    from ci_budget.history.model import HistoryError
    from ci_budget.workspace.history_store import load_history

    try:
        return load_history(Path(path), missing_ok=False)
    except HistoryError as exc:
        raise AppError(f"--history: {exc}") from None


def _changed_table_rows(settings, commit: str, notes: list[str]) -> tuple[list, list]:
    """Guard-table rows and problems of the files changed since the base commit."""
    from ci_budget.app.tables import table_rows
    from ci_budget.workspace.git import GitError, changed_files

    root = settings.root
    try:
        changed = [rel for rel in changed_files(root, commit) if (root / rel).is_file()]
    except GitError as exc:
        notes.append(f"architecture tables not checked: {exc}")
        return [], []
    return table_rows(settings, changed)
