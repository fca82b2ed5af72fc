"""Use case `report`: measured time against est_time, published to every sink.

Then `report --report-json FILE`: publish a report that a job without a write token made
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

from ci_budget.app.settings import (
    MODEL_HELP,
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

ANNOTATIONS_PER_LEVEL = 10  # GitHub shows no more per step and level


@dataclass
class ReportOptions:
    results: list[str] = option(
        list, metavar="PATH_OR_GLOB",
        help="ci-budget results file or glob (repeatable; shards are merged)",
    )  # fmt: skip
    json_reports: list[str] = option(
        list, flag="--json-report", metavar="FILE", help="pytest-json-report file (repeatable)"
    )
    out: Path | None = out_option()
    kind: str = option("run", help="sticky comment kind (default: %(default)s)")
    format: str | None = format_option()
    classes: str = option(
        "all", choices=("all", "flagged", "none"),
        help="text: per-class breakdown for every file, only files not ok, or none "
        "(default: %(default)s)",
    )  # fmt: skip
    fail_on: str = fail_on_option(
        "exit 1 when any file is over (or timed out) / timed out / failed (or timed out)"
    )
    post: bool = post_option()
    comment_mode: str = comment_mode_option()
    pr: int | None = pr_option()
    allow_empty: bool = option(
        False,
        help="a results glob that matches no file is a run where nothing ran (a report that "
        "says so, exit 0), not an error: for a job that runs whether or not any shard did",
    )
    history: Path | None = option(
        None, metavar="FILE",
        help="timing history store: each line's measured p90 and n (and est_time below it noted)",
    )  # fmt: skip
    partition_model: Path | None = option(None, metavar="FILE", help=MODEL_HELP)
    report_json: Path | None = option(
        None,
        metavar="FILE",
        help="publish a report JSON another job wrote (untrusted: validated as --kind, "
        "rendered again; on workflow_run the PR is looked up from the run's head)",
    )


def report(settings, options: ReportOptions, sink: Sink | None = None) -> int:
    """Build the report, write it everywhere; the exit status follows `fail_on`."""
    if options.report_json is not None:
        if options.results or options.json_reports:
            raise AppError("--report-json takes no --results or --json-report")
        published = PostJsonOptions(options.report_json, options.kind, options.pr,
                                    options.post, options.out, options.comment_mode)  # fmt: skip
        return post_json(settings, published, sink)
    from ci_budget.budget.status import build_report, worst_status
    from ci_budget.budget.verdict import run_news, run_verdict
    from ci_budget.render.run_md import markdown
    from ci_budget.render.text import json_chunks, terminal
    from ci_budget.workspace.scan import discover, scan_files

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    runs = load_runs(options)
    rows, problems = measured_table_rows(settings, runs)
    reported = {result.path for run in runs for result in run.files}
    # The report joins only the files that have results: the others need no parsing.
    scanned = scan_files(root, [f for f in discover(root, config) if f in reported], config)
    built = build_report(scanned, runs, config, kind=options.kind, arch_rows=rows,
                         arch_problems=problems)  # fmt: skip
    built.elsewhere = elsewhere(settings, runs)
    if options.history is not None or options.partition_model is not None:
        from ci_budget.app.numbers import plan_numbers
        from ci_budget.budget.status import attach_numbers

        attach_numbers(built, plan_numbers(options.history, options.partition_model, sink))
    md = markdown(built, blob=_blob(settings, runs))
    fmt = options.format or ("text" if sink.isatty() else "markdown")
    # The JSON copy, with every test case the largest output, is made once, a file at a time,
    # and goes to the file and (--format json) to stdout as it is made.
    sink.report_files(options.out, md, json_chunks(built), echo=fmt == "json")
    if fmt != "json":
        text = md if fmt == "markdown" else terminal(built, options.classes)
        sink.report(text, options.out, explicit=options.format is not None)
    sink.summary(md)
    statuses = [line.status for line in built.lines]
    sink.outputs(
        {
            "status": worst_status(built),
            "verdict": run_verdict(built).level,
            "over": statuses.count("over"),
            "near": statuses.count("near"),
            "timeouts": statuses.count("timeout"),
            "report-path": "" if options.out is None else str(options.out),
        }
    )
    sink.annotations(budget_annotations(built) + arch_annotations(built))
    sink.flush()
    if options.post:
        sink.post(md, kind=options.kind, pr=options.pr, what="the comment",
                  where=kept(options.out), mode=options.comment_mode,
                  news=run_news(built))  # fmt: skip
    return 1 if should_fail(options.fail_on, built) else 0


def _blob(settings, runs) -> str | None:
    """Where the files' lines are on GitHub: the commit the runs ran on (one commit only)."""
    from ci_budget.render.blocks import blob_base

    commits = {run.meta.commit for run in runs if run.meta.commit}
    commit = commits.pop() if len(commits) == 1 else None
    return blob_base(settings.env.server_url, settings.env.repository, commit)


def elsewhere(settings, runs) -> list[str]:
    """What the results are of that the checkout (whose registrations give the budgets) is not:
    another commit, another repository. Results that do not say are taken as the checkout's."""
    from ci_budget.workspace.git import head_commit

    here = head_commit(settings.root) or settings.env.sha
    out = []
    commits = sorted({m.commit for run in runs if (m := run.meta).commit})
    other = [c for c in commits if here and not (c.startswith(here) or here.startswith(c))]
    if other:
        names = ", ".join(c[:12] for c in other[:3]) + (", ..." if len(other) > 3 else "")
        out.append(f"commit {names} (the checkout is {here[:12]})")
    repo = settings.env.repository
    repos = sorted({m.repository for run in runs if (m := run.meta).repository})
    foreign = [r for r in repos if repo and r.lower() != repo.lower()]
    if foreign:
        out.append(f"repository {', '.join(foreign[:3])} (this is {repo})")
    return out


def load_runs(options: ReportOptions) -> list:
    from ci_budget.workspace.files import ResultsError, load_json_reports, load_results

    if not options.results and not options.json_reports:
        raise AppError(
            "give --results PATH_OR_GLOB or --json-report FILE (the static report is `ci-budget diff --base REF`)"
        )
    try:
        runs = load_results(options.results, options.allow_empty) if options.results else []
        if options.json_reports:
            runs += load_json_reports(options.json_reports)
    except ResultsError as exc:
        raise AppError(str(exc)) from None
    return runs


def measured_table_rows(settings, runs) -> tuple[list, list]:
    """Guard-table rows of the files in the results, flagged for their CI arch, with the values
    this run recorded (GPU runs only: a CPU number is no architecture's)."""
    from ci_budget.arch.docstrings import arch_mismatch
    from ci_budget.arch.match import attach_measured
    from ci_budget.workspace.files import guard_files, inside

    root, config = settings.root, settings.config
    files = sorted({result.path for run in runs for result in run.files})
    # Paths come from the results (a job that ran the PR's code): only the checkout's files.
    rows, problems, classes = guard_files(root, [f for f in files if inside(root, f)], config)
    for run in runs:
        if run.meta.gpu is not None and run.meta.gpu.arch:
            # Values that match no row are guard fill's to list; the report shows what matched.
            attach_measured(
                rows, [run], arch_map=config.gpu_arch_map(), pattern=config.arch.value_pattern,
                mapping=config.arch.rows, classes=classes,
            )  # fmt: skip
        mismatch = arch_mismatch(run.meta, config.gpu_arch_map())
        if mismatch is not None:
            problems.append(mismatch)
    return rows, problems


def should_fail(fail_on: str, report) -> bool:
    statuses = {line.status for line in report.lines}
    if fail_on == "over":
        return bool(statuses & {"over", "timeout"})
    if fail_on == "timeout":
        return "timeout" in statuses
    if fail_on == "failed":
        return bool(statuses & {"failed", "timeout"})
    return False


def budget_annotations(report) -> list[str]:
    """Workflow commands on each over/near/timeout file's register line, worst first, capped."""
    from ci_budget.github.actions import annotation
    from ci_budget.models import pct, secs

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
            text = f"timed out after {secs(line.measured)} of {secs(line.est_time)} budget"
            if line.suggestion is not None:
                text += f"; suggest est_time>={line.suggestion} (a lower bound)"
        else:
            text = f"measured {secs(line.measured)} of {secs(line.est_time)} ({pct(line.ratio)})"
            if line.suggestion is not None:
                text += f"; suggest est_time={line.suggestion}"
        out.append(
            annotation(
                level, text, file=line.file, line=line.line or None, title=titles[line.status]
            )
        )
    return out


def arch_annotations(report) -> list[str]:
    """A warning at each flagged table row, capped like the budget annotations."""
    from ci_budget.github.actions import annotation

    out: list[str] = []
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
    from ci_budget.render.blocks import blob_base

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
