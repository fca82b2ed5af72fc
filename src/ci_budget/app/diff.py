"""Use case `diff`: the static budget report of a PR (est_time against the base; no GPU)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.sink import Sink
from ci_budget.models import RegistryScan

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
    from ci_budget.workspace.scan import discover, scan_files

    root, config = settings.root, settings.config
    head_files = discover(root, config)
    head_scan = scan_files(root, head_files, config)
    commit, base_files, base_scan = _base_scan(settings, options.base, set(head_files), head_scan)
    history = _history(options.history)
    notes: list[str] = []
    arch_rows, arch_problems = _changed_table_rows(settings, commit, notes)
    return build_static(
        base_scan,
        head_scan,
        base_files,
        set(head_files),
        config,
        base_ref=options.base,
        base_commit=commit,
        history=history,
        arch_rows=arch_rows,
        arch_problems=arch_problems,
        extra_notes=notes,
    )


def _base_scan(
    settings, base: str, head_files: set[str], head_scan: RegistryScan
) -> tuple[str, set[str], RegistryScan]:
    """(commit, test files, their scan) at the base. A file git says is unchanged since the base
    has the base's content in the working tree, so its records are the head scan's: only the
    files the PR changed are read from git and parsed (a PR touches a handful of ~2,000)."""
    from ci_budget.registry.parse import by_file, merge, scan_source
    from ci_budget.workspace.git import GitError, changed_files, list_files, read_blobs, resolve

    root, config = settings.root, settings.config
    try:
        commit = resolve(root, base)
        files = list_files(root, commit, config)
        changed = set(changed_files(root, commit))
        head = by_file(head_scan)
        reused = {rel for rel in files if rel not in changed and rel in head_files}
        blobs = read_blobs(root, commit, [rel for rel in files if rel not in reused])
    except GitError as exc:
        raise AppError(f"--base {base}: {exc}") from None
    scans = (
        head.get(rel, RegistryScan()) if rel in reused else scan_source(blobs[rel], rel, config)
        for rel in files
        if rel in reused or rel in blobs
    )
    return commit, set(files), merge(scans)


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
