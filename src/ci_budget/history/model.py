"""Timing history: per (file, suite) samples taken from `RunResults` files, and statistics.

The model of the store (`workspace.files` reads and writes it). Every results file is one run; its identity is a hash of its
content, so adding the same file twice adds nothing. Each (file, suite) keeps its newest
`max_samples` samples (ordered by the run's date, then by when they were added).

Percentiles are nearest-rank: p90 of n values is the ceil(0.9 n)-th smallest, always a value
that was measured. Only passing runs count toward p50/p90/max (and so toward suggestions and
planner weights); timeouts are kept and reported: their count, and their longest elapsed as a
lower bound of the real time.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime

from pydantic import BaseModel, Field

from ci_budget.models import RunResults, Seconds

STORE_VERSION = 1
DEFAULT_MAX_SAMPLES = 50
TREND_WINDOW = 10  # passing runs a trend point's p50/p90 are taken over
RECENT_RUNS = 5  # passing runs a file's typical time (for a predicted shard wall) is taken over
NO_SUITE = ""  # results of a run by file list (`--spec`) rather than by suite


class HistoryError(Exception):
    """A store or results file that cannot be used; the message names the file."""


class Sample(BaseModel):
    run: str  # run identity: content hash of the results file
    elapsed: Seconds
    status: str
    est_time: Seconds | None = None
    commit: str | None = None
    host: str | None = None
    labels: list[str] = Field(default_factory=list)
    partition: str | None = None
    date: datetime | None = None
    seq: int = 0  # order added to the store: breaks date ties, orders undated runs


class Series(BaseModel):
    file: str
    suite: str
    samples: list[Sample] = Field(default_factory=list)


class Stats(BaseModel):
    file: str
    suite: str
    runs: int = 0  # every kept sample
    n: int = 0  # passing samples: the ones p50/p90/max are taken over
    p50: float | None = None
    p90: float | None = None
    max: float | None = None
    timeouts: int = 0
    timeout_lower_bound: float | None = None  # the real time is at least this
    failed: int = 0  # failed or crashed
    last_date: datetime | None = None
    last_commit: str | None = None


class TrendPoint(BaseModel):
    """One passing run of a (file, suite), with p50/p90 over the passing runs up to it (the
    last `TREND_WINDOW`) and the est_time that run was budgeted at."""

    date: datetime | None = None
    elapsed: float
    p50: float
    p90: float
    est_time: float | None = None


class JobWall(BaseModel):
    """One CI job of a suite: its wall time (completed - started) against the Σ of its files'
    elapsed. Their difference is the job's overhead (set-up, teardown) over its tests."""

    run: str  # the job's run key (`ci-stats:<run>:<job>:<attempt>`)
    suite: str
    wall: float
    total: float  # Σ elapsed of the job's files
    date: datetime | None = None


class StoreFile(BaseModel):
    schema_version: int = STORE_VERSION
    max_samples: int = DEFAULT_MAX_SAMPLES
    next_seq: int = 0
    series: list[Series] = Field(default_factory=list)
    jobs: list[JobWall] = Field(default_factory=list)  # per suite, newest max_samples


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (0 < p <= 100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


def run_identity(results: RunResults) -> str:
    canonical = json.dumps(results.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _date_key(sample: Sample) -> tuple:
    # Undated samples sort before dated ones: they are dropped first when trimming.
    stamp = sample.date.timestamp() if sample.date is not None else float("-inf")
    return (stamp, sample.seq)


class History:
    """The store in memory, indexed by (file, suite)."""

    def __init__(self, max_samples: int = DEFAULT_MAX_SAMPLES):
        if max_samples < 1:
            raise ValueError(f"max samples must be at least 1, not {max_samples}")
        self.max_samples = max_samples
        self.next_seq = 0
        self._series: dict[tuple[str, str], list[Sample]] = {}
        self.jobs: dict[str, list[JobWall]] = {}  # suite -> job walls, oldest first

    @classmethod
    def from_store(cls, store: StoreFile) -> History:
        history = cls(store.max_samples)
        history.next_seq = store.next_seq
        for series in store.series:
            history._series.setdefault((series.file, series.suite), []).extend(series.samples)
        for job in store.jobs:
            history.jobs.setdefault(job.suite, []).append(job)
        return history

    def to_store(self) -> StoreFile:
        return StoreFile(
            max_samples=self.max_samples,
            next_seq=self.next_seq,
            series=[
                Series(file=file, suite=suite, samples=samples)
                for (file, suite), samples in sorted(self._series.items())
            ],
            jobs=[job for suite in sorted(self.jobs) for job in self.jobs[suite]],
        )

    def keys(self) -> list[tuple[str, str]]:
        return sorted(self._series)

    def samples(self, file: str, suite: str) -> list[Sample]:
        return list(self._series.get((file, suite), []))

    def add_results(self, results: RunResults) -> int:
        """Add one run's measured files; returns how many samples were new."""
        run = run_identity(results)
        meta = results.meta
        date = meta.finished_at or meta.started_at
        default_suite = meta.suites[0] if len(meta.suites) == 1 else NO_SUITE
        added = 0
        for fr in results.files:
            if fr.status == "not-run":
                continue  # nothing was measured
            sample = Sample(
                run=run,
                elapsed=fr.elapsed,
                status=fr.status,
                est_time=fr.est_time,
                commit=meta.commit,
                host=meta.host,
                labels=list(meta.runner_labels),
                partition=meta.partition,
                date=date,
            )
            added += self.add_sample(fr.path, fr.suite or default_suite, sample)
        return added

    def add_sample(self, file: str, suite: str, sample: Sample) -> bool:
        """Add one sample unless its run is already in the (file, suite) series."""
        series = self._series.setdefault((file, suite), [])
        if any(s.run == sample.run for s in series):
            return False
        series.append(sample.model_copy(update={"seq": self.next_seq}))
        self.next_seq += 1
        series.sort(key=_date_key)
        del series[: max(0, len(series) - self.max_samples)]
        return True

    def add_job_wall(self, job: JobWall) -> bool:
        """Add a job's wall unless that job is already there; the suite keeps its newest."""
        walls = self.jobs.setdefault(job.suite, [])
        if any(j.run == job.run for j in walls):
            return False
        walls.append(job)
        walls.sort(key=lambda j: j.date.timestamp() if j.date else float("-inf"))
        del walls[: max(0, len(walls) - self.max_samples)]
        return True

    def overhead(self, suite: str) -> float | None:
        """A job's typical time beyond its files' elapsed: the median of wall - Σ elapsed
        over the suite's recorded jobs (None without any)."""
        gaps = sorted(j.wall - j.total for j in self.jobs.get(suite, []))
        if not gaps:
            return None
        mid = len(gaps) // 2
        return gaps[mid] if len(gaps) % 2 else (gaps[mid - 1] + gaps[mid]) / 2

    def recent(self, file: str, suite: str, window: int = RECENT_RUNS) -> tuple[float | None, int]:
        """The file's typical time now: nearest-rank p50 of its newest `window` passing
        samples (None without any), and how many passing samples it has in all."""
        passed = [s.elapsed for s in self._series.get((file, suite), []) if s.status == "passed"]
        return percentile(passed[-window:], 50), len(passed)

    def recent_p50(self, file: str, suite: str, window: int = RECENT_RUNS) -> float | None:
        """`recent`'s p50 alone."""
        return self.recent(file, suite, window)[0]

    def stats(self, file: str, suite: str) -> Stats:
        samples = self._series.get((file, suite), [])
        passed = [s.elapsed for s in samples if s.status == "passed"]
        timeouts = [s.elapsed for s in samples if s.status == "timeout"]
        last = samples[-1] if samples else None
        return Stats(
            file=file,
            suite=suite,
            runs=len(samples),
            n=len(passed),
            p50=percentile(passed, 50),
            p90=percentile(passed, 90),
            max=max(passed) if passed else None,
            timeouts=len(timeouts),
            timeout_lower_bound=max(timeouts) if timeouts else None,
            failed=sum(1 for s in samples if s.status in ("failed", "crashed")),
            last_date=last.date if last else None,
            last_commit=last.commit if last else None,
        )

    def trend(self, file: str, suite: str, window: int = TREND_WINDOW) -> list[TrendPoint]:
        """The passing runs, oldest first, each with the rolling p50/p90 up to it."""
        passed = [s for s in self._series.get((file, suite), []) if s.status == "passed"]
        points = []
        for i, sample in enumerate(passed):
            recent = [s.elapsed for s in passed[max(0, i + 1 - window) : i + 1]]
            points.append(
                TrendPoint(
                    date=sample.date,
                    elapsed=sample.elapsed,
                    p50=percentile(recent, 50),
                    p90=percentile(recent, 90),
                    est_time=sample.est_time,
                )
            )
        return points

    def all_stats(self) -> list[Stats]:
        return [self.stats(file, suite) for file, suite in self.keys()]
