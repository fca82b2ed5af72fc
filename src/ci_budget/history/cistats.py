"""sglang-ci-stats run files (`runs/<date>__<run_id>.json` of sgl-project/sglang-ci-stats): one
scheduled CI run, its jobs (suite, backend, start and end, runner labels) and each job's
per-file timings. Pure: parsed JSON in, samples out.

A job's samples share the run key `ci-stats:<run>:<job>:<attempt>`, so adding the same file
twice, or a newer copy of it with more jobs (the scraper appends reruns), adds only what is new.
`passed` absent means passed (the scraper's older entries). Within one job a file listed twice
(a retry) keeps its last entry.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ci_budget.history.model import History, JobWall, Sample

MATRIX = re.compile(r"\((\d+)\)\s*$")  # "base-b-test-1-gpu-large (3)": shard 3


class RunFileError(Exception):
    """A run file of the wrong shape; the message says where in it."""


@dataclass(frozen=True)
class Timing:
    file: str
    elapsed: float
    passed: bool = True


@dataclass(frozen=True)
class Job:
    job_id: int
    name: str
    suite: str
    backend: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    labels: tuple[str, ...] = ()
    timings: tuple[Timing, ...] = ()
    attempt: int = 1

    @property
    def wall(self) -> float | None:
        """completed - started, in seconds (None when either is missing)."""
        if self.started_at is None or self.completed_at is None:
            return None
        return (self.completed_at - self.started_at).total_seconds()

    @property
    def shard(self) -> int | None:
        found = MATRIX.search(self.name)
        return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Run:
    run_id: int
    started_at: datetime | None = None
    head_sha: str | None = None
    event: str | None = None
    jobs: tuple[Job, ...] = ()

    def shard_counts(self) -> dict[str, int]:
        """suite -> shards dispatched, from the highest matrix index of its jobs."""
        out: dict[str, int] = {}
        for job in self.jobs:
            if job.shard is not None:
                out[job.suite] = max(out.get(job.suite, 0), job.shard + 1)
        return out


@dataclass
class Added:
    samples: int = 0
    entries: int = 0
    jobs: int = 0


def is_run_file(data: Any) -> bool:
    """The shape of an sglang-ci-stats run file: an object with a run_id and a jobs list."""
    return isinstance(data, dict) and "run_id" in data and isinstance(data.get("jobs"), list)


def parse_time(text: Any, where: str) -> datetime | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise RunFileError(f"{where}: not an ISO time: {text!r}")
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise RunFileError(f"{where}: not an ISO time: {text!r}") from None


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RunFileError(f"{where}: not an integer: {value!r}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise RunFileError(f"{where}: not a non-empty string: {value!r}")
    return value


def _timing(entry: Any, where: str) -> Timing:
    if not isinstance(entry, dict):
        raise RunFileError(f"{where}: not an object")
    elapsed = entry.get("elapsed")
    ok = isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool)
    if not ok or not math.isfinite(elapsed) or elapsed < 0:
        raise RunFileError(f"{where}.elapsed: not a number of seconds: {elapsed!r}")
    passed = entry.get("passed", True)
    if not isinstance(passed, bool):
        raise RunFileError(f"{where}.passed: not true/false: {passed!r}")
    return Timing(_str(entry.get("file"), f"{where}.file"), float(elapsed), passed)


def _job(data: Any, where: str, run_attempt: int) -> Job:
    if not isinstance(data, dict):
        raise RunFileError(f"{where}: not an object")
    timings = data.get("timings", [])
    if not isinstance(timings, list):
        raise RunFileError(f"{where}.timings: not a list")
    labels = data.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise RunFileError(f"{where}.labels: not a list of strings")
    backend = data.get("backend")
    return Job(
        job_id=_int(data.get("job_id"), f"{where}.job_id"),
        name=str(data.get("name") or ""),
        suite=_str(data.get("suite"), f"{where}.suite"),
        backend=backend if isinstance(backend, str) else None,
        started_at=parse_time(data.get("started_at"), f"{where}.started_at"),
        completed_at=parse_time(data.get("completed_at"), f"{where}.completed_at"),
        labels=tuple(labels),
        timings=tuple(_timing(t, f"{where}.timings[{i}]") for i, t in enumerate(timings)),
        attempt=_int(data.get("run_attempt", run_attempt), f"{where}.run_attempt"),
    )


def parse_run(data: Any) -> Run:
    """The run in `data` (parsed JSON); RunFileError naming the first bad field."""
    if not is_run_file(data):
        raise RunFileError("not an sglang-ci-stats run file (no run_id and jobs list)")
    attempt = _int(data.get("run_attempt", 1), "run_attempt")
    sha = data.get("head_sha")
    event = data.get("event")
    return Run(
        run_id=_int(data.get("run_id"), "run_id"),
        started_at=parse_time(data.get("started_at"), "started_at"),
        head_sha=sha if isinstance(sha, str) else None,
        event=event if isinstance(event, str) else None,
        jobs=tuple(_job(j, f"jobs[{i}]", attempt) for i, j in enumerate(data["jobs"])),
    )


def add_run(history: History, run: Run) -> Added:
    """Add every job's timings; a job already in the store adds nothing."""
    out = Added()
    sizes = run.shard_counts()
    for job in run.jobs:
        key = f"ci-stats:{run.run_id}:{job.job_id}:{job.attempt}"
        last = {t.file: t for t in job.timings}  # a retried file: its last entry
        partition = None
        if job.shard is not None and job.suite in sizes:
            partition = f"{job.shard}/{sizes[job.suite]}"
        new = 0
        for timing in last.values():
            sample = Sample(
                run=key,
                elapsed=timing.elapsed,
                status="passed" if timing.passed else "failed",
                commit=run.head_sha,
                labels=list(job.labels),
                partition=partition,
                date=job.completed_at or job.started_at or run.started_at,
            )
            new += history.add_sample(timing.file, job.suite, sample)
        out.entries += len(job.timings)
        out.samples += new
        out.jobs += bool(new)
        total = math.fsum(t.elapsed for t in job.timings)
        if job.wall is not None and total > 0:
            history.add_job_wall(
                JobWall(run=key, suite=job.suite, wall=job.wall, total=total,
                        date=job.completed_at or job.started_at)
            )  # fmt: skip
    return out
