"""Importing CI job logs from GitHub: runs -> jobs -> job logs, into the history store.

The store's cursor (per repository, workflow and branch) records the runs whose jobs are all read
and the jobs read in unfinished runs; it is saved after every run and when the import stops, so a
second import asks only for the run list, and an interrupted one resumes where it stopped.
"""

from __future__ import annotations

import fnmatch
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from ci_budget.history.imports import JobInfo, add_job, partition_sizes
from ci_budget.history.logs import LogTimings, excerpt, parse_log
from ci_budget.history.model import History, ImportCursor, RunMark

SKIPPED = {"skipped", None}  # conclusions of jobs that ran nothing (None: never started)


@dataclass
class Summary:
    runs: int = 0  # runs read completely this time
    jobs: int = 0  # job logs read
    samples: int = 0  # new samples
    entries: int = 0  # timing entries read
    problems: int = 0
    stopped: str | None = None  # why the import stopped early; None when it finished
    lines: list[str] = field(default_factory=list)


class Progress:
    """Counts on one rewritten line on a terminal; plain lines (one per run) elsewhere."""

    def __init__(self, stream=None, tty: bool | None = None, every: float = 0.2):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every, self._last, self._shown, self._text = every, 0.0, False, ""

    def counts(self, text: str, force: bool = False) -> None:
        if not self.tty:
            return
        now = time.monotonic()
        self._text = text
        if force or now - self._last >= self.every:
            self._last = now
            self.stream.write(f"\r\x1b[K{text}")
            self.stream.flush()
            self._shown = True

    def line(self, text: str) -> None:
        if self.tty and self._shown:
            self.stream.write("\r\x1b[K")
            self._shown = False
        print(text, file=self.stream, flush=True)

    def done(self) -> None:
        if self.tty and self._text:
            self.stream.write(f"\r\x1b[K{self._text}\n")  # the final counts
            self._shown, self._text = False, ""


def parse_since(text: str | None, today: date) -> date | None:
    """`30d` (days back from today) or an ISO date."""
    if not text:
        return None
    if text.endswith("d") and text[:-1].isdigit():
        return today - timedelta(days=int(text[:-1]))
    return date.fromisoformat(text)


def job_label(job: JobInfo) -> str:
    return f"job {job.id} {excerpt(job.name)}"


# --- from GitHub ---------------------------------------------------------------------------------
@dataclass
class GitHubImport:
    workflow: str
    branch: str | None = None
    since: date | None = None
    max_runs: int | None = None
    jobs: list[str] = field(default_factory=list)  # job-name globs; empty: every job
    reserve: int = 50  # API requests to leave in the rate-limit window
    suite: str | None = None  # force every sample into this suite


def cursor_key(repo: str, workflow: str, branch: str | None) -> str:
    return f"{repo}:{workflow}:{branch or '*'}"


def import_github(
    history: History,
    actions,
    request: GitHubImport,
    save: Callable[[], None],
    progress: Progress,
    out: Summary | None = None,
) -> Summary:
    """Import the logs of the workflow's runs; `save()` writes the store (called after every run
    and before returning or raising). Counts go to `out`, kept when GitHub stops the import."""
    key = cursor_key(actions.repo, request.workflow, request.branch)
    cursor = history.imports.setdefault(key, ImportCursor())
    out = out if out is not None else Summary()
    try:
        _import_runs(history, actions, request, cursor, out, save, progress)
    finally:
        save()
        progress.done()
    return out


def _import_runs(history, actions, request, cursor, out, save, progress) -> None:
    listing = actions.list_runs(
        request.workflow, request.branch, request.since, request.max_runs,
        cursor.etag, cursor.etag_url,
    )  # fmt: skip
    if listing.not_modified:
        progress.line(f"{request.workflow}: no new runs since the last import (304 Not Modified)")
        return
    todo = [r for r in reversed(listing.runs) if _new(cursor, r)]  # oldest first
    progress.line(
        f"{request.workflow}: {len(listing.runs)} completed run(s) listed, {len(todo)} to read"
    )
    done_jobs = set(cursor.jobs)
    cursor.etag = None  # only a listing read to the end may answer "nothing new" next time
    for number, run in enumerate(todo, start=1):
        stop = _low_quota(actions, request.reserve)
        if stop:
            out.stopped = stop
            break
        try:
            complete = _import_run(history, actions, request, run, done_jobs, out, progress,
                                   number, len(todo))  # fmt: skip
        finally:  # also when GitHub stops us mid-run: the jobs read so far are not read again
            cursor.jobs = sorted(done_jobs)
        if complete:
            cursor.runs[run.id] = RunMark(attempt=run.attempt, created=run.created_at)
            out.runs += 1
        save()
        if out.stopped:
            break
    if not out.stopped and all(not _new(cursor, r) for r in listing.runs):
        cursor.etag, cursor.etag_url = listing.etag, listing.url
    _prune(cursor, listing.runs, request.since)
    if out.stopped:
        progress.line(f"stopped: {out.stopped}; run the same command again to resume")


def _new(cursor: ImportCursor, run) -> bool:
    mark = cursor.runs.get(run.id)
    return mark is None or mark.attempt < run.attempt


def _prune(cursor: ImportCursor, runs, since: date | None) -> None:
    """Forget runs that were created before the listing window and are no longer listed."""
    listed = {r.id for r in runs}
    if since is not None:
        start = datetime(since.year, since.month, since.day, tzinfo=timezone.utc)
        for run_id, mark in list(cursor.runs.items()):
            if run_id not in listed and mark.created is not None and mark.created < start:
                del cursor.runs[run_id]


def _low_quota(actions, reserve: int) -> str | None:
    left = actions.rate_remaining()
    if left is None or left[0] > reserve:
        return None
    when = datetime.fromtimestamp(left[1], timezone.utc).strftime("%H:%M UTC")
    return f"{left[0]} API request(s) left until {when} (keeping {reserve} in reserve)"


def _import_run(history, actions, request, run, done_jobs, out, progress, number, total) -> bool:
    """Read a run's jobs; True when every job is read (or needs no reading)."""
    jobs = actions.list_jobs(run.id)
    sizes = partition_sizes([j.name for j in jobs])
    complete, new_before = True, out.samples
    wanted = [j for j in jobs if j.conclusion not in SKIPPED and _matches(j.name, request.jobs)]
    for job in wanted:
        if job.id in done_jobs:
            continue
        stop = _low_quota(actions, request.reserve)
        if stop:
            out.stopped, complete = stop, False
            break
        if _import_job(history, actions, request, job, sizes, out, progress):
            done_jobs.add(job.id)
        else:
            complete = False
        progress.counts(
            f"runs {number}/{total}  jobs {out.jobs}  samples +{out.samples}  "
            f"problems {out.problems}"
        )
    if complete:
        done_jobs.difference_update(j.id for j in jobs)
    when = run.created_at.date().isoformat() if run.created_at else "?"
    if not progress.tty:
        progress.line(
            f"run {run.id} (attempt {run.attempt}, {when}, {run.conclusion}): "
            f"{len(wanted)} job(s), +{out.samples - new_before} sample(s)"
            + ("" if complete else ", incomplete")
        )
    return complete


def _matches(name: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _import_job(history, actions, request, job, sizes, out, progress) -> bool:
    """Read one job's log; True when done with it (imported, or its log is gone for good)."""
    from ci_budget.github.actions import LogUnavailable

    label = job_label(job)
    try:
        timings = parse_log(actions.job_log(job.id))
    except LogUnavailable as exc:
        out.problems += 1
        progress.line(f"{label}: {exc.message}" + ("" if exc.final else "; will retry"))
        return exc.final
    out.jobs += 1
    added = add_job(history, f"job:{job.id}", job, timings, sizes, request.suite)
    out.samples += added.samples
    out.entries += added.entries
    if job.conclusion == "cancelled" and timings.blocks:
        progress.line(f"{label}: cancelled; its TIMINGS block is kept ({added.entries} file(s))")
    _report(label, timings, added.unplaced, out, progress)
    return True


def _report(label: str, timings: LogTimings, unplaced: list[str], out, progress) -> None:
    for problem in timings.problems:
        out.problems += 1
        where = f" line {problem.line}" if problem.line else ""
        progress.line(f"{label}{where}: {problem.message}")
    if unplaced:
        out.problems += 1
        progress.line(
            f"{label}: no suite for {len(unplaced)} file(s) (no run_suite command line and no "
            "suite in the job name); pass --suite"
        )
