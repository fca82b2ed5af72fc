"""`ci-budget report --base REF`: the static budget report (no GPU) for a PR.

`cli/report.py` owns the parser and calls `run(args)` here when --base is given. Uses: root,
config, base, history, format, out, post, pr, token, fail_on.
"""

from __future__ import annotations

KIND = "budget"


def _arch_rows(root, commit, config, notes: list[str]) -> tuple[list, list]:
    """(flagged rows, problems) of the architecture tables in files changed since the base,
    when `ci_budget.arch.flags` offers `rows_for_files`; otherwise nothing (the hook stays clean)."""
    try:
        from ci_budget.arch import flags as arch
    except ImportError:
        return [], []
    rows_for_files = getattr(arch, "rows_for_files", None)
    if rows_for_files is None:
        return [], []
    from ci_budget.workspace.git import GitError, changed_files

    try:
        changed = [rel for rel in changed_files(root, commit) if (root / rel).is_file()]
    except GitError as exc:
        notes.append(f"architecture tables not checked: {exc}")
        return [], []
    rows, problems = rows_for_files(root, changed, config, None)
    return list(rows), list(problems)


def build(args):
    """(report, markdown) for `args`; CliError on bad input."""
    from pathlib import Path

    from ci_budget.budget.diff import build_static
    from ci_budget.cli.common import CliError, load
    from ci_budget.history.model import HistoryError, load_history
    from ci_budget.registry.parse import merge, scan_source
    from ci_budget.render.diff_md import markdown
    from ci_budget.workspace.git import GitError, files_at
    from ci_budget.workspace.scan import discover, scan_files

    root, config = load(args)
    try:
        commit, blobs = files_at(root, args.base, config)
    except GitError as exc:
        raise CliError(f"--base {args.base}: {exc}") from None
    base_scan = merge(scan_source(data, rel, config) for rel, data in sorted(blobs.items()))
    head_files = discover(root, config)
    head_scan = scan_files(root, head_files, config)
    history = None
    if getattr(args, "history", None):
        try:
            history = load_history(Path(args.history), missing_ok=False)
        except HistoryError as exc:
            raise CliError(f"--history: {exc}") from None
    notes: list[str] = []
    arch_rows, arch_problems = _arch_rows(root, commit, config, notes)
    report = build_static(
        base_scan,
        head_scan,
        set(blobs),
        set(head_files),
        config,
        base_ref=args.base,
        base_commit=commit,
        history=history,
        arch_rows=arch_rows,
    )
    report.notes.extend(notes)
    report.arch_problems = arch_problems
    return report, markdown(report)


def run(args) -> int:
    import os
    import sys
    from pathlib import Path

    from ci_budget.cli.common import CliError
    from ci_budget.github import workflow as actions

    report, md = build(args)
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(md, encoding="utf-8")
        out.with_suffix(".json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{out}: cannot write: {exc.strerror}") from None
    text = report.model_dump_json(indent=2) if args.format == "json" else md
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    actions.append_summary(md)
    actions.set_outputs(
        {
            "budget-risk": report.risk,
            "est-delta": f"{report.est_delta:+.0f}",
            "report-path": str(out),
        }
    )
    if args.post:
        token = args.token or os.environ.get("GITHUB_TOKEN")
        try:
            from ci_budget.github.client import post_report
        except ImportError:
            raise CliError(
                f"--post needs ci_budget.github.client.post_report, not in this build (report: {out})"
            ) from None
        from ci_budget.cli.common import load

        _, config = load(args)
        try:
            post_report(md, kind=KIND, pr=args.pr, token=token, config=config)
        except Exception as exc:  # the report is on disk; say why posting failed
            message = str(exc).replace(token, "***") if token else str(exc)
            raise CliError(
                f"posting the budget comment failed: {message} (report: {out})"
            ) from None
    failing = report.risk == "over" or bool(report.errors_introduced)
    return 1 if args.fail_on != "never" and failing else 0
