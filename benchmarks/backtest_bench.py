"""Backtest: how well does each predictor foresee a suite's wall time on sglang's real CI?

`python -m benchmarks.backtest_bench --runs DIR --sglang-git GIT_DIR`

Replays sglang-ci-stats run files (`runs/*.json`) in date order. For each run and suite it
predicts, from what was known before that run only, the suite's makespan at the run's own shard
count and compares it with the realized one: the slowest shard's job wall (completed - started).
Predictors (the candidates for the product's default):

- `est_time`: the in-source est_time at the run's head commit (read from GIT_DIR), LPT-split,
  coeff 1, bias 0: what sglang plans with when it has no model;
- `p90`: nearest-rank p90 of the file's passing runs before this one (ci-budget's history),
  else est_time; LPT-split on it, coeff 1, bias 0;
- `fit`: what a partition model derived from the earlier runs would predict: the same per-file
  p90, and per suite an OLS fit of job wall on Σ elapsed over the earlier runs' jobs
  (derive.py's method: at least 3 jobs, the newest 16; coeff <= 0 dropped).

The rest split the shards as the product plans them (on the p90, else est_time) and take a
shard's wall from the history where the suite has earlier job walls (else Σ planned seconds):

- `history`: Σ of each file's p50 (over all its kept runs) + the suite's median job overhead
  (wall - Σ elapsed);
- `history_p90`: Σ of the files' p90 + the median overhead;
- `history_mean`: Σ p50 + the mean overhead;
- `recent`: Σ of each file's p50 over its newest 3 passing runs + the median overhead, through
  the product's own `PlanNumbers.shard_wall` (its default with a history store);
- `fit_or_history`: the OLS fit above applied to Σ p50 once the suite has at least 8 earlier
  jobs, else `history`.

The default is chosen honestly: the runs with pairs are cut in two by date; the candidate with
the lowest max(median / 8 %, p90 / 25 %) over the earlier half wins (ties: the first listed),
and its score on the later half (held out from the choice) and on all pairs is reported.

Pairs are left out where the run lacks a successful job for some shard index (the scraper
keeps successful jobs only, so the realized makespan would be short) and where nothing earlier
was measured for the suite (every history predictor would be est_time). Prints the median and
p90 absolute relative error per predictor, the data used and the machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci_budget.history.cistats import Run, add_run, parse_run
from ci_budget.history.model import History, percentile
from ci_budget.sharding.model import PlanNumbers
from ci_budget.sharding.planners import lpt

PREDICTORS = (
    "est_time", "p90", "fit", "history", "history_p90", "history_mean", "recent",
    "fit_or_history",
)  # fmt: skip
TARGET = {"median": 0.08, "p90": 0.25}
DEFAULT = "recent"  # what PlanNumbers.shard_wall does with a history store
MIN_FIT, MAX_FIT = 3, 16  # derive.py's window for a suite's fit
ENOUGH_JOBS = 8  # fit_or_history: earlier jobs a suite needs before its fit is used


@dataclass
class Pair:
    run: int
    date: str
    suite: str
    shards: int
    realized: float
    predicted: dict[str, float] = field(default_factory=dict)

    def error(self, name: str) -> float:
        return abs(self.predicted[name] - self.realized) / self.realized


def ols(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(coeff, bias) of y on x by least squares; None for too few points or no spread."""
    if len(points) < MIN_FIT:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    coeff = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return (coeff, my - coeff * mx) if coeff > 0 else None


def _complete(run: Run, suite: str) -> list | None:
    """The suite's jobs when every shard index up to the count has exactly one, else None."""
    jobs = [j for j in run.jobs if j.suite == suite and j.wall is not None]
    count = run.shard_counts().get(suite)
    shards = [j.shard for j in jobs]
    if not count or None in shards or sorted(shards) != list(range(count)):
        return None
    return jobs


def _makespan(items: list[tuple[str, float]], shards: int, coeff: float, bias: float) -> float:
    weight = dict(items)
    plan = lpt(items, shards)
    return max(coeff * math.fsum(weight[k] for k in shard) + bias for shard in plan)


def backtest(runs: Iterable[Run], est_at: Callable[[str | None], dict]) -> tuple[list[Pair], dict]:
    """Every evaluable (run, suite) pair, oldest run first; and counts of what was left out."""
    history = History(max_samples=50)
    fits: dict[str, list[tuple[float, float]]] = defaultdict(list)  # newest last
    skipped = {"incomplete": 0, "no history": 0, "files without est_time": 0}
    pairs = []
    for run in sorted(runs, key=lambda r: (r.started_at is None, r.started_at)):
        est = est_at(run.head_sha)
        for suite in sorted({j.suite for j in run.jobs}):
            jobs = _complete(run, suite)
            if jobs is None:
                skipped["incomplete"] += 1
                continue
            files = sorted({t.file for j in jobs for t in j.timings})
            if not any(history.stats(f, suite).n for f in files):
                skipped["no history"] += 1
                continue
            pair = Pair(run.run_id, str(run.started_at)[:16], suite, len(jobs),
                        max(j.wall for j in jobs))  # fmt: skip
            _predict(pair, files, est, history, fits.get(suite, []), skipped)
            pairs.append(pair)
        add_run(history, run)
        for job in run.jobs:  # after predicting: only earlier runs ever inform a prediction
            total = math.fsum(t.elapsed for t in job.timings)
            if job.wall is not None and total > 0:
                fits[job.suite].append((total, job.wall))
    return pairs, skipped


def _predict(pair: Pair, files, est, history, fit_points, skipped) -> None:
    suite, k = pair.suite, pair.shards
    in_source = {}
    for f in files:
        if (f, suite) not in est:
            skipped["files without est_time"] += 1
        in_source[f] = est.get((f, suite), 0.0)
    stats = {f: history.stats(f, suite) for f in files}
    p90 = [(f, stats[f].p90 if stats[f].p90 is not None else in_source[f]) for f in files]
    fit = ols(fit_points[-MAX_FIT:])
    coeff, bias = fit or (1.0, 0.0)
    numbers = PlanNumbers(history=history)  # the product's own rule, on the earlier runs only
    planned = {f: numbers.seconds(f, suite, in_source[f])[0] for f in files}
    split = lpt(list(planned.items()), k)
    p50 = {f: float(stats[f].p50) if stats[f].p50 is not None else planned[f] for f in files}
    gaps = [j.wall - j.total for j in history.jobs.get(suite, [])]

    def walls(typical: dict, overhead: float | None, coeff: float = 1.0) -> float:
        if not gaps:  # no earlier job walls: Σ planned, as the product does
            typical, overhead = planned, 0.0
        return max(coeff * math.fsum(typical[f] for f in shard) + overhead for shard in split)

    median = history.overhead(suite)
    pair.predicted = {
        "est_time": _makespan(list(in_source.items()), k, 1.0, 0.0),
        "p90": _makespan(p90, k, 1.0, 0.0),
        "fit": _makespan(p90, k, coeff, bias),
        "history": walls(p50, median),
        "history_p90": walls(planned, median),
        "history_mean": walls(p50, statistics.fmean(gaps) if gaps else None),
        "recent": max(numbers.shard_wall(suite, [(f, in_source[f]) for f in shard])
                      for shard in split),
        "fit_or_history": walls(p50, bias, coeff) if fit and len(fit_points) >= ENOUGH_JOBS
                          else walls(p50, median),
    }  # fmt: skip


def summary(pairs: list[Pair]) -> dict[str, tuple[float, float]]:
    """predictor -> (median, nearest-rank p90) of the absolute relative error."""
    out = {}
    for name in PREDICTORS:
        errors = [p.error(name) for p in pairs]
        out[name] = (statistics.median(errors), percentile(errors, 90)) if errors else (0, 0)
    return out


def halves(pairs: list[Pair]) -> tuple[list[Pair], list[Pair]]:
    """The pairs of the earlier half of the runs (by date) and of the later half."""
    runs = sorted({(p.date, p.run) for p in pairs})
    cut = runs[len(runs) // 2] if runs else None
    return [p for p in pairs if (p.date, p.run) < cut], [p for p in pairs if (p.date, p.run) >= cut]


def criterion(score: tuple[float, float]) -> float:
    """How far from the target a (median, p90) is at its worse end: <= 1 meets both."""
    return max(score[0] / TARGET["median"], score[1] / TARGET["p90"])


def choose(pairs: list[Pair]) -> str:
    """The predictor the earlier half of the runs picks (lowest criterion; ties: first)."""
    early = summary(halves(pairs)[0])
    return min(PREDICTORS, key=lambda name: criterion(early[name]))


def est_from_git(git_dir: Path, cache: Path) -> Callable[[str | None], dict]:
    """est_time per (file, suite) at a commit: the commit's test files and CI files archived
    from GIT_DIR (once per commit) and scanned as `ci-budget scan` would, zero config."""
    from ci_budget.app.settings import Settings
    from ci_budget.workspace.scan import scan_tree

    memo: dict[str | None, dict] = {None: {}}

    def est_at(sha: str | None) -> dict:
        if sha not in memo:
            root = cache / sha
            if not root.is_dir():
                root.mkdir(parents=True)
                paths = ["test", "python/sglang/test/ci", "scripts/ci", ".github"]
                tar = subprocess.run(["git", f"--git-dir={git_dir}", "archive", sha, *paths],
                                     capture_output=True, check=True).stdout  # fmt: skip
                subprocess.run(["tar", "-x", "-C", str(root)], input=tar, check=True)
            settings = Settings(root)
            regs = scan_tree(root, settings.config).registrations
            memo[sha] = {
                (r.file, r.suite): r.est_time for r in regs if r.backend in ("cuda", "cpu")
            }
        return memo[sha]

    return est_at


def read_runs(directory: Path) -> list[Run]:
    return [parse_run(json.loads(p.read_text())) for p in sorted(directory.glob("*.json"))]


def _span(pairs: list[Pair]) -> str:
    runs = {p.run for p in pairs}
    dates = sorted(p.date for p in pairs)
    where = f"{dates[0]} .. {dates[-1]}" if dates else "-"
    return f"{len(runs)} runs, {len(pairs)} pairs, {where}"


def report(pairs: list[Pair], skipped: dict, runs: list[Run]) -> str:
    dated = sorted(str(r.started_at)[:16] for r in runs if r.jobs)
    early, late = halves(pairs)
    scores = [summary(early), summary(late), summary(pairs)]
    chosen = choose(pairs)
    lines = [
        f"machine: {platform.node()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
        f"data: {len(runs)} run files ({len([r for r in runs if r.jobs])} with jobs), "
        f"{dated[0] if dated else '-'} .. {dated[-1] if dated else '-'}; "
        f"{len(pairs)} (run, suite) pairs predicted over {len({p.run for p in pairs})} runs; "
        f"left out: {skipped}",
        f"earlier half (chooses): {_span(early)}",
        f"later half (held out):  {_span(late)}",
        "",
        "median / p90 |err|  earlier half    later half      all pairs   "
        "(target <= 8 % median, <= 25 % p90, on all pairs)",
    ]
    for name in PREDICTORS:
        cells = "  ".join(f"{s[name][0] * 100:5.1f}% {s[name][1] * 100:5.1f}%" for s in scores)
        met = criterion(scores[2][name]) <= 1
        marks = ["met" if met else "missed"]
        marks += ["chosen"] if name == chosen else []
        marks += ["default"] if name == DEFAULT else []
        lines.append(f"{name:<15} {cells}  {', '.join(marks)}")
    median, p90 = scores[1][chosen]
    lines += [
        "",
        f"chosen on the earlier half: {chosen}; held out (later half): {median * 100:.1f} % "
        f"median, {p90 * 100:.1f} % p90; all pairs: {scores[2][chosen][0] * 100:.1f} % / "
        f"{scores[2][chosen][1] * 100:.1f} %",
    ]
    if chosen != DEFAULT:
        lines.append(f"NOTE: the product's default (PlanNumbers.shard_wall) is {DEFAULT}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="a directory of run files")
    parser.add_argument("--sglang-git", type=Path, required=True, help="git dir of sglang")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "ci-budget-backtest"
    )
    parser.add_argument("--pairs", action="store_true", help="also print every pair")
    args = parser.parse_args(argv)
    runs = read_runs(args.runs)
    pairs, skipped = backtest(runs, est_from_git(args.sglang_git, args.cache))
    sys.stdout.write(report(pairs, skipped, runs))
    if args.pairs:
        for p in pairs:
            errors = " ".join(
                f"{n}={(p.predicted[n] - p.realized) / p.realized * 100:+.0f}%" for n in PREDICTORS
            )
            print(f"{p.date} {p.suite:<32} k={p.shards} real={p.realized:.0f}s {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
