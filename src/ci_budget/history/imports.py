"""Samples from parsed job logs, and estimates from a partition model. Pure.

A job's samples share the run key `job:<id>`, so importing a job twice adds nothing; a log
read from a file is keyed by a hash of its content instead (`log:<sha>`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ci_budget.history.logs import LogTimings, job_suite
from ci_budget.history.model import Estimate, History, Sample


@dataclass(frozen=True)
class JobInfo:
    """What the samples of one job carry besides the log: GitHub's job record."""

    id: int
    name: str
    run_id: int = 0
    conclusion: str | None = None
    head_sha: str | None = None
    runner_name: str | None = None
    labels: tuple[str, ...] = ()
    completed_at: datetime | None = None


@dataclass
class Added:
    samples: int = 0  # new samples
    entries: int = 0  # timing entries read
    unplaced: list[str] = field(default_factory=list)  # files without a suite


def partition_sizes(names: list[str]) -> dict[str, int]:
    """suite -> shard count, from the matrix indices of a run's job names (`suite (3)`)."""
    sizes: dict[str, int] = {}
    for name in names:
        suite, matrix = job_suite(name)
        if suite and matrix is not None and matrix.isdigit():
            sizes[suite] = max(sizes.get(suite, 0), int(matrix) + 1)
    return sizes


def add_job(
    history: History,
    run: str,
    job: JobInfo,
    timings: LogTimings,
    sizes: dict[str, int] | None = None,
    suite: str | None = None,
) -> Added:
    """Add a job's timing entries. The suite is `suite` when given, else the run_suite command
    line before the block, else the job's name; the partition likewise ("i/n" where the run's
    matrix gives the shard count)."""
    name_suite, matrix = job_suite(job.name) if job.name else (None, None)
    out = Added(entries=len(timings.entries))
    for entry in timings.entries:
        where = suite or entry.suite or name_suite
        if not where:
            out.unplaced.append(entry.file)
            continue
        partition = entry.partition
        if partition is None and matrix is not None and where == name_suite:
            size = (sizes or {}).get(where)
            partition = f"{matrix}/{size}" if size and matrix.isdigit() else matrix
        status = entry.status
        if job.conclusion == "cancelled" and status == "failed":
            status = "cancelled"  # the cancel may be why it failed: not a failure of the file
        sample = Sample(
            run=run,
            elapsed=entry.elapsed,
            status=status,
            commit=job.head_sha,
            host=job.runner_name,
            labels=list(job.labels),
            partition=partition,
            date=job.completed_at,
        )
        out.samples += history.add_sample(entry.file, where, sample)
    return out


def model_estimates(est: Mapping[str, Mapping[str, float]], source: str) -> list[Estimate]:
    """A partition model's per-file seconds (suite -> file -> s, as `sharding.model` read
    them) as estimates."""
    return [
        Estimate(file=path, suite=suite, seconds=seconds, source=source)
        for suite, files in est.items()
        for path, seconds in files.items()
    ]


def seed(history: History, estimates: list[Estimate]) -> int:
    """Store estimates (replacing older ones for the same file); returns how many are usable
    now, i.e. for (file, suite) pairs without any sample."""
    for est in estimates:
        history.estimates[(est.file, est.suite)] = est
    return sum(1 for est in estimates if history.estimate(est.file, est.suite) is not None)


def block_key(timings: LogTimings) -> str:
    """A log's run key: the same block read from two files (a run's combined log and its step
    log) adds its samples once."""
    digest = hashlib.sha256()
    for stamp in timings.begin_stamps:
        digest.update(stamp.encode() + b"\0")
    for e in timings.entries:
        digest.update(f"{e.file}\0{e.status}\0{e.elapsed}\0{e.suite}\0{e.partition}\n".encode())
    return "log:" + digest.hexdigest()[:16]


def stamp_date(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        # GitHub writes 7 fractional digits; Python's parser takes at most 6
        head, _, frac = stamp.rstrip("Z").partition(".")
        return datetime.fromisoformat(head + ("." + frac[:6] if frac else "") + "+00:00")
    except ValueError:
        return None
