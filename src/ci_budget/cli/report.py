"""`ci-budget report`: measured time vs est_time, to the terminal, files and GitHub sinks."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_common, add_subcommand

ANNOTATIONS_PER_LEVEL = 10  # GitHub shows no more per step and level
FAIL_ON = ("over", "timeout", "failed", "never")


def add_parser(sub):
    p = add_subcommand(
        sub,
        "report",
        help="compare measured time with est_time and publish the report",
        description="Build the budget report from result files (one per shard, merged) and "
        "the registry. Writes markdown (--out) and a JSON copy next to it, the step summary, "
        "outputs and annotations when running in GitHub Actions, and with --post the PR's "
        "sticky comment. With --base REF, the static est_time report against the PR base.",
        example="ci-budget report --results 'results/*.json' --fail-on over\n"
        "ci-budget report --json-report report.json --format terminal",
    )
    add_common(p)
    p.add_argument(
        "--results",
        action="append",
        default=[],
        metavar="PATH_OR_GLOB",
        help="ci-budget results file or glob (repeatable; shards are merged)",
    )
    p.add_argument(
        "--json-report",
        action="append",
        default=[],
        metavar="FILE",
        help="pytest-json-report file (repeatable)",
    )
    p.add_argument(
        "--format",
        choices=["markdown", "terminal", "json"],
        default=None,
        help="what to print (default: terminal on a tty, else markdown)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("ci-budget-report.md"),
        help="markdown file to write; a .json copy goes next to it (default: %(default)s)",
    )
    p.add_argument("--kind", default="run", help="sticky comment kind (default: %(default)s)")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="never",
        help="exit 1 when any file is over (or timed out) / timed out / failed (or timed out)",
    )
    p.add_argument("--post", action="store_true", help="publish as the PR's sticky comment")
    p.add_argument("--pr", type=int, default=None, help="PR number for --post")
    p.add_argument("--token", default=None, help="GitHub token for --post (default: $GITHUB_TOKEN)")
    p.add_argument(
        "--base", default=None, metavar="REF", help="static report: est_time diff vs REF"
    )
    p.add_argument("--history", default=None, metavar="FILE", help="timing history for --base")
    return p


def should_fail(fail_on: str, report) -> bool:
    statuses = {line.status for line in report.lines}
    if fail_on == "over":
        return bool(statuses & {"over", "timeout"})
    if fail_on == "timeout":
        return "timeout" in statuses
    if fail_on == "failed":
        return bool(statuses & {"failed", "timeout"})
    return False


def annotations(report) -> list[str]:
    """Workflow commands on each over/near/timeout file's register line, worst first, capped."""
    from ci_budget.github.workflow import annotation

    titles = {"timeout": "timed out", "over": "over budget", "near": "near budget"}
    used: dict[str, int] = {}
    out = []
    for line in report.lines:  # already worst first
        if line.status not in titles:
            continue
        level = "error" if line.status == "timeout" else "warning"
        if used.get(level, 0) >= ANNOTATIONS_PER_LEVEL:
            continue
        used[level] = used.get(level, 0) + 1
        if line.status == "timeout":
            text = f"timed out after {line.measured:.0f}s of {line.est_time:g}s budget"
            if line.suggestion is not None:
                text += f"; suggest est_time>={line.suggestion} (a lower bound)"
        else:
            text = f"measured {line.measured:.0f}s of {line.est_time:g}s ({line.ratio * 100:.0f}%)"
            if line.suggestion is not None:
                text += f"; suggest est_time={line.suggestion}"
        out.append(
            annotation(
                level, text, file=line.file, line=line.line or None, title=titles[line.status]
            )
        )
    return out


def _load(args, config):
    from ci_budget.cli.common import CliError
    from ci_budget.workspace.result_files import ResultsError, load_json_reports, load_results

    if not args.results and not args.json_report:
        raise CliError("give --results PATH_OR_GLOB or --json-report FILE (or --base REF)")
    try:
        runs = load_results(args.results) if args.results else []
        if args.json_report:
            runs += load_json_reports(args.json_report)
    except ResultsError as exc:
        raise CliError(str(exc)) from None
    return runs


def _add_arch(report, root: Path, config, runs) -> None:
    """Measured-KL table rows of the files in the report, flagged for their CI arch, with the
    values this run recorded (GPU runs only: a CPU number is no architecture's)."""
    from ci_budget.arch.flags import arch_mismatch, attach_measured, rows_for_files

    rels = sorted({line.file for line in report.lines if (root / line.file).is_file()})
    rows, problems = rows_for_files(root, rels, config)
    for run in runs:
        if run.meta.gpu is not None and run.meta.gpu.arch:
            attach_measured(rows, [run], problems=problems, arch_map=config.gpu_arch_map())
        mismatch = arch_mismatch(run.meta, config.gpu_arch_map())
        if mismatch is not None:
            problems.append(mismatch)
    report.arch_rows = rows
    report.problems.extend(problems)


def arch_annotations(report) -> list[str]:
    """A warning at each flagged table row, capped like the budget annotations."""
    from ci_budget.github.workflow import annotation

    out = []
    for row in report.arch_rows:
        serious = [f for f in row.flags if f != "silent everywhere"]
        if not serious or len(out) >= ANNOTATIONS_PER_LEVEL:
            continue
        cells = ", ".join(f"{arch}: {cell.raw or 'empty'}" for arch, cell in row.reverted.items())
        case = f"{row.group} {row.case}" if row.group else row.case
        out.append(
            annotation(
                "warning",
                f"{case}: {'; '.join(serious)} ({row.ci_arch or 'no CI arch'}); fix reverted: {cells}",
                file=row.file,
                line=row.line,
                title="architecture row not verified on CI hardware",
            )
        )
    return out


def _post(args, markdown: str, config, out: Path) -> None:
    import os

    from ci_budget.cli.common import CliError

    token = args.token or os.environ.get("GITHUB_TOKEN")
    try:
        from ci_budget.github.client import post_report
    except ImportError:
        raise CliError(
            f"--post needs ci_budget.github.client.post_report, which this build does not have "
            f"(the report is in {out})"
        ) from None
    try:
        post_report(markdown, kind=args.kind, pr=args.pr, token=token, config=config)
    except Exception as exc:  # any failure: say so, the report is already on disk
        message = str(exc)
        if token:
            message = message.replace(token, "***")
        raise CliError(f"posting the comment failed: {message} (the report is in {out})") from None


def run(args) -> int:
    import sys

    if args.base is not None:
        from ci_budget.cli.common import CliError

        try:
            from ci_budget.cli.static_report import run as run_static
        except ImportError:
            raise CliError("--base needs ci_budget.cli.static_report, not in this build") from None
        return run_static(args)

    from ci_budget.budget.status import build_report, worst_status
    from ci_budget.cli.common import CliError, load
    from ci_budget.github import workflow as actions
    from ci_budget.render.run_md import markdown
    from ci_budget.render.text import json_text, terminal
    from ci_budget.workspace.scan import scan_tree

    root, config = load(args)
    runs = _load(args, config)
    report = build_report(scan_tree(root, config), runs, config, kind=args.kind)
    _add_arch(report, root, config, runs)
    md = markdown(report)
    out: Path = args.out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(md, encoding="utf-8")
        out.with_suffix(".json").write_text(json_text(report), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{out}: cannot write: {exc.strerror}") from None

    fmt = args.format or ("terminal" if sys.stdout.isatty() else "markdown")
    text = {
        "markdown": lambda: md,
        "terminal": lambda: terminal(report),
        "json": lambda: json_text(report),
    }[fmt]()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")

    actions.append_summary(md)
    statuses = [line.status for line in report.lines]
    actions.set_outputs(
        {
            "status": worst_status(report),
            "over": statuses.count("over"),
            "near": statuses.count("near"),
            "timeouts": statuses.count("timeout"),
            "report-path": str(out),
        }
    )
    if actions.in_actions():
        for command in annotations(report) + arch_annotations(report):
            print(command)
    sys.stdout.flush()
    if args.post:
        _post(args, md, config, out)
    return 1 if should_fail(args.fail_on, report) else 0
