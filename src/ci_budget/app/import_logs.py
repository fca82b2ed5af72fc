"""Use case `history import`: per-file timings from CI job logs into the history store,
from GitHub (`app.import_runs`) or from downloaded logs (a file, a directory, a run's log zip);
optionally seeded with a partition model's estimates."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.history import store_option, store_path
from ci_budget.app.import_runs import GitHubImport, Progress, Summary, import_github, parse_since
from ci_budget.app.options import option
from ci_budget.app.sink import Sink
from ci_budget.history.imports import JobInfo, add_job, block_key, model_estimates, seed, stamp_date
from ci_budget.history.logs import parse_log
from ci_budget.history.model import History
from ci_budget.workspace.log_files import log_sources


@dataclass
class ImportOptions:
    store: Path | None = store_option()
    workflow: str | None = option(None, help="workflow file name or id (e.g. pr-test.yml)")
    from_paths: list[Path] = option(
        list, flag="--from", metavar="PATH",
        help="read downloaded logs instead of GitHub (file, directory or zip; repeatable)",
    )  # fmt: skip
    branch: str | None = option(None, needs="workflow", help="only runs on this branch (e.g. main)")
    since: str | None = option(
        "30d", needs="workflow", help="runs created since: Nd or YYYY-MM-DD (default: 30d)"
    )
    max_runs: int | None = option(None, needs="workflow", help="at most the newest N runs")
    jobs: list[str] = option(
        list, flag="--job", metavar="GLOB", needs="workflow",
        help="only jobs whose name matches (repeatable; default every job)",
    )  # fmt: skip
    suite: str | None = option(None, help="put every sample in this suite")
    partition_model: Path | None = option(
        None, metavar="FILE",
        help="sglang-ci-stats model.json: per-file estimates where no sample exists",
    )  # fmt: skip
    max_samples: int | None = option(
        None, help="samples kept per (file, suite), newest first (default: the store's, else 50)"
    )
    repo: str | None = option(
        None, needs="workflow", help="OWNER/NAME (default: $GITHUB_REPOSITORY)"
    )
    reserve: int = option(
        50, needs="workflow",
        help="stop (resumably) when this many API requests or fewer remain (default 50)",
    )  # fmt: skip


def import_files(history: History, paths: list[Path], suite: str | None, progress,
                 suites=frozenset) -> Summary:  # fmt: skip
    """`suites()`: the registered suite names, asked for only when a log file's own name is
    all that could name its suite (it counts only when it names one)."""
    out = Summary()
    for path in paths:
        if not path.exists():
            out.problems += 1
            progress.line(f"{path}: no such file or directory")
            continue
        for name, job_name, lines in log_sources(path):
            try:
                timings = parse_log(lines())
            except OSError as exc:
                out.problems += 1
                progress.line(f"{name}: cannot read: {exc.strerror or exc}")
                continue
            out.jobs += 1
            when = stamp_date(timings.last_stamp)
            stem = Path(name).stem
            if job_name is None and not suite and stem in suites():
                job_name = stem
            job = JobInfo(id=0, name=job_name or "", completed_at=when)
            added = add_job(history, block_key(timings), job, timings, None, suite)
            out.samples += added.samples
            out.entries += added.entries
            for problem in timings.problems:
                out.problems += 1
                where = f"{name}:{problem.line}" if problem.line else name
                progress.line(f"{where}: {problem.message}")
            if added.unplaced:
                out.problems += 1
                why = "no run_suite.py command line" + (
                    "" if job_name else f" and its file name {stem!r} is no registered suite"
                )
                progress.line(f"{name}: no suite for {len(added.unplaced)} file(s) ({why}); "
                              "nothing imported from them: pass --suite SUITE")  # fmt: skip
    return out


def seed_from_model(history: History, path: Path, progress) -> int:
    """Seed per-file estimates from a partition model file; returns how many are in use. A
    model that cannot be used is a line each, as in every command, and seeds nothing."""
    from ci_budget.workspace.model_file import read_model

    model, problems = read_model(path)
    for problem in problems:
        progress.line(f"--partition-model {problem}")
    if model is None:
        return 0
    return seed(history, model_estimates(model.est, path.name))


def import_logs(settings, options: ImportOptions, sink: Sink | None = None, client=None) -> int:
    """0 done (problem lines may be printed; from files: 2 when there were any), 1 GitHub stopped
    the import (what was read is saved), 2 usage or input error."""
    from ci_budget.history.model import HistoryError
    from ci_budget.workspace.history_store import load_history, save_history

    sink = sink or Sink(settings)
    settings.check()
    since = _check(options)
    store = store_path(settings, options.store)
    progress = Progress(sink.stderr)
    try:
        history = load_history(store, options.max_samples)
    except HistoryError as exc:
        raise AppError(str(exc)) from None
    seeded = None
    if options.partition_model is not None:
        seeded = seed_from_model(history, options.partition_model, progress)
    if options.from_paths:
        out = import_files(history, options.from_paths, options.suite, progress,
                           functools.cache(lambda: _registered_suites(settings)))  # fmt: skip
        if out.samples or seeded or store.exists():  # a failed import leaves no empty store
            save_history(store, history)
        status = 2 if out.problems else 0
    else:
        out, status = _from_github(settings, options, store, sink, client, history, since, progress)
    sink.echo(_summary(store, out, history, seeded))
    return status


def _registered_suites(settings) -> set[str]:
    from ci_budget.workspace.scan import scan_tree

    return {r.suite for r in scan_tree(settings.root, settings.config).registrations}


def _check(options: ImportOptions):
    if bool(options.workflow) == bool(options.from_paths):
        raise AppError("give either --workflow (read GitHub) or --from PATH (read files)")
    if options.max_samples is not None and options.max_samples < 1:
        raise AppError(f"--max-samples must be at least 1, not {options.max_samples}")
    if options.max_runs is not None and options.max_runs < 1:
        raise AppError(f"--max-runs must be at least 1, not {options.max_runs}")
    try:
        return parse_since(options.since, datetime.now(timezone.utc).date())
    except ValueError:
        raise AppError(f"--since {options.since!r}: expected Nd (e.g. 30d) or YYYY-MM-DD") from None


def _from_github(settings, options, store, sink, client, history, since, progress):
    from ci_budget.github.actions import Actions
    from ci_budget.github.client import client_from_env
    from ci_budget.github.retry import GitHubError
    from ci_budget.workspace.history_store import save_history

    if client is None:
        env = settings.env.values
        env = {**env, "GITHUB_REPOSITORY": options.repo} if options.repo else env
        try:
            client = client_from_env(env, token=settings.token, config=settings.config)
        except GitHubError as exc:
            raise AppError(exc.message) from None
    request = GitHubImport(
        workflow=options.workflow, branch=options.branch, since=since, max_runs=options.max_runs,
        jobs=list(options.jobs), reserve=options.reserve, suite=options.suite,
    )  # fmt: skip
    actions = Actions(client)
    out = Summary()
    try:
        import_github(history, actions, request, lambda: save_history(store, history),
                      progress, out)  # fmt: skip
    except GitHubError as exc:
        progress.line(f"ci-budget history import: {exc.message}")
        progress.line(f"{store}: what was read is saved; run the same command again to resume")
        return out, 1
    sink.echo(f"{actions.api_requests} API request(s)")
    return out, 0


def _summary(store: Path, out: Summary, history: History, seeded: int | None) -> str:
    text = (
        f"{store}: {out.jobs} log(s) read, {out.entries} timing entr(ies), {out.samples} new "
        f"sample(s), {out.problems} problem(s); {len(history.keys())} (file, suite) series"
    )
    if seeded is not None:
        text += f"; {seeded} partition-model estimate(s) in use"
    return text
