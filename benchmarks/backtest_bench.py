"""Backtest: how close does a predicted shard wall come to the wall sglang's CI really took?

`python -m benchmarks.backtest_bench --runs DIR (--sglang-git GIT_DIR | --est FILE)`

Replays sglang-ci-stats run files (`runs/*.json`) in date order, walk-forward: each run and
suite is predicted from the runs before it only, at the run's own shard count, and compared
with the realized slowest shard: its job wall (completed - started). Error = |predicted -
realized| / realized. Predictors:

- `est_time`: the in-source est_time at the run's head commit, LPT-split, coeff 1, bias 0:
  sglang without a model;
- `sglang_model`: sglang's partition model as its `derive.py` would have written it from the
  earlier runs (the 7 days before the run's UTC midnight; per file the p90 of the newest 16
  passing times, at least 3; per suite the OLS of job wall on Σ elapsed over the newest 16 jobs,
  at least 3, coeff <= 0 dropped): LPT on its est (else est_time), coeff x Σ + bias;
- `before_model`: ci-budget before this rule, given that model: the model's fit wins wherever
  it has one (coeff x Σ planned seconds + bias), else Σ recent p50 + the median job overhead;
- `history`: ci-budget's rule without a model (`PlanNumbers.shard_wall`): each file's p50 over
  its newest `window` passing runs once it has `enough`, else est_time; + the suite's median job
  overhead (wall - Σ elapsed) of the earlier jobs;
- `history_model`: the same rule given the model: a file with fewer than `enough` passing runs
  takes the model's est; the model's fit alone where the suite has no job walls yet;
- `history_blend`: not the product's rule, kept for comparison: `history_model`, but where the
  suite has job walls and a fit, the mean of its wall and sglang's own prediction.

(`enough`, `window`) is chosen honestly: the runs with pairs are cut in two by date; over the
earlier half, by the worse of `history` and `history_model` on max(median / 4 %, p90 / 15 %);
ties go to the product's default, listed first. Only the chosen rule's later-half (held-out)
and all-pairs figures are reported beside the others'.

Pairs are left out where the run lacks a successful job for some shard index (the scraper
keeps successful jobs only, so the realized makespan would be short) and where nothing earlier
was measured for the suite. `--est FILE` reads est_time from JSON instead of a git checkout:
{head_sha: {suite: {file: seconds}}} (what `--dump-est` writes).
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
from datetime import datetime, timedelta
from pathlib import Path

from ci_budget.history.cistats import Run, add_run, parse_run
from ci_budget.history.model import History, percentile
from ci_budget.sharding.dispatch import ENOUGH_PASSING, RECENT_WINDOW, PartitionModel, PlanNumbers
from ci_budget.sharding.select import lpt

FIXED = ("est_time", "sglang_model", "before_model")
TUNED = ("history", "history_model", "history_blend")
TARGET = {"median": 0.04, "p90": 0.15}
DEFAULT = (ENOUGH_PASSING, RECENT_WINDOW)  # what PlanNumbers does; first: wins ties
CANDIDATES = (DEFAULT, *((e, w) for w in (3, 5) for e in (1, 2, 3) if (e, w) != DEFAULT))
WINDOW_DAYS, MIN_EST, MIN_FIT, MAX_SAMPLES = 7, 3, 3, 16  # derive.py's


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


def tuned(name: str, candidate: tuple) -> str:
    return f"{name}@{candidate[0]}/{candidate[1]}"


def ols(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(coeff, bias) of y on x by least squares; None for too few points, no spread or a
    coefficient that is not positive (sglang's consumers fall back to 1, 0)."""
    if len(points) < MIN_FIT:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    coeff = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return (round(coeff, 4), round(my - coeff * mx, 1)) if coeff > 0 else None


def derive_model(earlier: list[Run], at: datetime | None) -> PartitionModel:
    """The model derive.py would have written from `earlier` when run `at` started."""
    if at is None:
        return PartitionModel(source="derived")
    midnight = at.replace(hour=0, minute=0, second=0, microsecond=0)
    cutoff = midnight - timedelta(days=WINDOW_DAYS)
    recent = [r for r in earlier if r.started_at is not None and cutoff <= r.started_at < at]
    recent.sort(key=lambda r: r.started_at, reverse=True)  # newest first, as derive.py
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    walls: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for run in recent:
        for job in run.jobs:
            for t in job.timings:
                if t.passed:
                    times[(job.suite, t.file)].append(t.elapsed)
            total = math.fsum(t.elapsed for t in job.timings)
            if job.wall is not None and total > 0:
                walls[job.suite].append((total, job.wall))
    model = PartitionModel(source="derived")
    for (suite, file), values in times.items():
        if len(values[:MAX_SAMPLES]) >= MIN_EST:
            p90 = statistics.quantiles(values[:MAX_SAMPLES], n=10, method="inclusive")[8]
            model.est.setdefault(suite, {})[file] = float(round(p90))
    for suite, points in walls.items():
        if (fit := ols(points[:MAX_SAMPLES])) is not None:
            model.fit[suite] = fit
    return model


def _complete(run: Run, suite: str) -> list | None:
    """The suite's jobs when every shard index up to the count has exactly one, else None."""
    jobs = [j for j in run.jobs if j.suite == suite and j.wall is not None]
    count = run.shard_counts().get(suite)
    shards = [j.shard for j in jobs]
    if not count or None in shards or sorted(shards) != list(range(count)):
        return None
    return jobs


def backtest(
    runs: Iterable[Run],
    est_at: Callable[[str | None], dict],
    candidates=CANDIDATES,
    split: str = "dispatched",
) -> tuple[list[Pair], dict]:
    """Every evaluable (run, suite) pair, oldest run first; and counts of what was left out.
    `split`: "dispatched" predicts the wall of each shard as the run dispatched it (its jobs'
    files: the split is known, only the time is predicted); "lpt" re-splits the files as each
    predictor's numbers would (LPT), so a different split counts against it too."""
    history = History(max_samples=50)
    skipped = {"incomplete": 0, "no history": 0}
    pairs, earlier = [], []
    for run in sorted(runs, key=lambda r: (r.started_at is None, r.started_at)):
        est = est_at(run.head_sha)
        model = derive_model(earlier, run.started_at)
        for suite in sorted({j.suite for j in run.jobs}):
            jobs = _complete(run, suite)
            if jobs is None:
                skipped["incomplete"] += 1
                continue
            files = sorted({t.file for j in jobs for t in j.timings})
            if not any(history.recent(f, suite)[1] for f in files):
                skipped["no history"] += 1
                continue
            pair = Pair(run.run_id, str(run.started_at)[:16], suite, len(jobs),
                        max(j.wall for j in jobs))  # fmt: skip
            in_source = {f: float(est.get(suite, {}).get(f, 0.0)) for f in files}
            shards = None
            if split == "dispatched":
                shards = [sorted({t.file for t in j.timings}) for j in jobs]
            _predict(pair, in_source, history, model, candidates, shards)
            pairs.append(pair)
        add_run(history, run)  # after predicting: only earlier runs ever inform a prediction
        earlier.append(run)
    return pairs, skipped


def _slowest(numbers: PlanNumbers, suite: str, in_source: dict, k, wall) -> float:
    """The slowest shard's wall: of the dispatched shards (`k` a list of file lists), or of
    the k shards the numbers would dispatch (LPT on `seconds`)."""
    if isinstance(k, int):
        planned = [(f, numbers.seconds(f, suite, e)[0]) for f, e in in_source.items()]
        k = lpt(planned, k)
    return max(wall([(f, in_source[f]) for f in shard]) for shard in k)


def _predict(pair: Pair, in_source: dict, history, model, candidates, shards=None) -> None:
    suite, k = pair.suite, shards or pair.shards
    bare = PlanNumbers()
    sglang = PlanNumbers(model=model)
    before = PlanNumbers(model=model, history=history, enough=1)

    def before_wall(files: list) -> float:  # the previous rule: the model's fit overrides
        if suite in model.fit:
            return before.wall(suite, math.fsum(before.seconds(f, suite, e)[0] for f, e in files))
        return before.shard_wall(suite, files)

    pair.predicted = {
        "est_time": _slowest(bare, suite, in_source, k, lambda fs: math.fsum(e for _, e in fs)),
        "sglang_model": _slowest(sglang, suite, in_source, k, lambda fs: sglang.wall(
            suite, math.fsum(sglang.seconds(f, suite, e)[0] for f, e in fs))),
        "before_model": _slowest(before, suite, in_source, k, before_wall),
    }  # fmt: skip
    for cand in candidates:
        for name, given in (("history", None), ("history_model", model)):
            numbers = PlanNumbers(model=given, history=history, enough=cand[0], window=cand[1])
            pair.predicted[tuned(name, cand)] = _slowest(
                numbers, suite, in_source, k, lambda fs, n=numbers: n.shard_wall(suite, fs)
            )
        pair.predicted[tuned("history_blend", cand)] = _slowest(
            numbers, suite, in_source, k, lambda fs, n=numbers: _blend(n, suite, fs)
        )


def _blend(numbers: PlanNumbers, suite: str, files: list) -> float:
    """The mean of the rule's wall and sglang's own prediction (coeff x Σ planned + bias) where
    the suite has job walls and the model a fit; else the rule's wall."""
    ours = numbers.shard_wall(suite, files)
    history, model = numbers.history, numbers.model
    if history is None or model is None or history.overhead(suite) is None:
        return ours
    if suite not in model.fit:
        return ours
    planned = math.fsum(numbers.seconds(f, suite, e)[0] for f, e in files)
    return (ours + numbers.wall(suite, planned)) / 2


def score(pairs: list[Pair], name: str) -> tuple[float, float]:
    """(median, nearest-rank p90) of the absolute relative error."""
    errors = [p.error(name) for p in pairs]
    return (statistics.median(errors), percentile(errors, 90)) if errors else (0.0, 0.0)


def halves(pairs: list[Pair]) -> tuple[list[Pair], list[Pair]]:
    """The pairs of the earlier half of the runs (by date) and of the later half."""
    runs = sorted({(p.date, p.run) for p in pairs})
    cut = runs[len(runs) // 2] if runs else None
    return [p for p in pairs if (p.date, p.run) < cut], [p for p in pairs if (p.date, p.run) >= cut]


def criterion(s: tuple[float, float]) -> float:
    """How far from the target a (median, p90) is at its worse end: <= 1 meets both."""
    return max(s[0] / TARGET["median"], s[1] / TARGET["p90"])


def choose(pairs: list[Pair], candidates=CANDIDATES) -> tuple:
    """The (enough, window) the earlier half picks: by the worse of `history` and
    `history_model`, the lowest criterion (ties: first)."""
    early = halves(pairs)[0]
    rule = ("history", "history_model")
    return min(candidates, key=lambda c: max(criterion(score(early, tuned(n, c))) for n in rule))


def results(pairs: list[Pair], skipped: dict, runs: list[Run]) -> dict:
    """Everything the report prints, as data (what `--format json` writes)."""
    chosen = choose(pairs)
    early, late = halves(pairs)
    names = {n: n for n in FIXED} | {n: tuned(n, chosen) for n in TUNED}
    dated = sorted(str(r.started_at)[:16] for r in runs if r.jobs)
    return {
        "runs": len(runs),
        "runs_with_jobs": len(dated),
        "span": [dated[0], dated[-1]] if dated else [],
        "pairs": len(pairs),
        "left_out": skipped,
        "earlier": sorted({p.date for p in early}),
        "later": sorted({p.date for p in late}),
        "chosen": list(chosen),
        "default": list(DEFAULT),
        "scores": {
            label: {part: [round(x, 4) for x in score(ps, key)]
                    for part, ps in (("earlier", early), ("later", late), ("all", pairs))}
            for label, key in names.items()
        },
        "candidates": {
            tuned("", c)[1:]: {n: [round(x, 4) for x in score(early, tuned(n, c))] for n in TUNED}
            for c in CANDIDATES
        },
    }  # fmt: skip


def report(data: dict) -> str:
    lines = [
        f"machine: {platform.node()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
        f"data: {data['runs']} run files ({data['runs_with_jobs']} with jobs), "
        f"{' .. '.join(data['span']) or '-'}; {data['pairs']} (run, suite) pairs; "
        f"left out: {data['left_out']}; shards: {data.get('split', 'dispatched')}",
        f"earlier half (tunes): {len(data['earlier'])} runs; later half (held out): "
        f"{len(data['later'])} runs, from {data['later'][0] if data['later'] else '-'}",
        f"tuned on the earlier half (enough/window): "
        f"{tuned('', data['chosen'])[1:]} (product default {tuned('', data['default'])[1:]})",
        "",
        "slowest shard |err|   earlier half    later half      all pairs   "
        "(target <= 4 % median, <= 15 % p90)",
    ]
    for name, parts in data["scores"].items():
        cells = "  ".join(f"{parts[p][0] * 100:5.1f}% {parts[p][1] * 100:5.1f}%"
                          for p in ("earlier", "later", "all"))  # fmt: skip
        held = "met" if criterion(tuple(parts["later"])) <= 1 else "missed"
        lines.append(f"{name:<15} {cells}  held out: {held}")
    lines += ["", "candidates on the earlier half (history; history_model; history_blend):"]
    for cand, s in data["candidates"].items():
        lines.append(f"  {cand}: " + "; ".join(f"{s[n][0] * 100:.1f}% {s[n][1] * 100:.1f}%"
                                              for n in TUNED))  # fmt: skip
    return "\n".join(lines) + "\n"


def est_from_git(git_dir: Path, cache: Path) -> Callable[[str | None], dict]:
    """est_time {suite: {file: s}} at a commit: the commit's test and CI files archived from
    GIT_DIR (once per commit) and scanned as `ci-budget scan` would, zero config."""
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
            out: dict[str, dict[str, float]] = {}
            for r in scan_tree(root, Settings(root).config).registrations:
                if r.backend in ("cuda", "cpu"):
                    out.setdefault(r.suite, {})[r.file] = r.est_time
            memo[sha] = out
        return memo[sha]

    return est_at


def read_runs(directory: Path) -> list[Run]:
    return [parse_run(json.loads(p.read_text())) for p in sorted(directory.glob("*.json"))]


def _dump_est(runs: list[Run], est_at) -> dict:
    """{head_sha: {suite: {file: est}}} for the files the runs measured (an `--est` file)."""
    out: dict = {}
    for run in runs:
        measured = {(j.suite, t.file) for j in run.jobs for t in j.timings}
        est = est_at(run.head_sha)
        for suite, file in sorted(measured):
            if file in est.get(suite, {}):
                out.setdefault(run.head_sha, {}).setdefault(suite, {})[file] = est[suite][file]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="a directory of run files")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--sglang-git", type=Path, help="git dir of sglang (est_time)")
    source.add_argument("--est", type=Path, help="est_time as JSON {sha: {suite: {file: s}}}")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "ci-budget-backtest"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--split", choices=("dispatched", "lpt"), default="dispatched",
        help="predict the shards as the run dispatched them, or as each predictor would split",
    )  # fmt: skip
    parser.add_argument("--dump-est", type=Path, help="write the est_time used as JSON")
    parser.add_argument("--pairs", action="store_true", help="also print every pair")
    args = parser.parse_args(argv)
    runs = read_runs(args.runs)
    if args.est is not None:
        table = json.loads(args.est.read_text())
        est_at: Callable = lambda sha: table.get(sha, {})  # noqa: E731
    else:
        est_at = est_from_git(args.sglang_git, args.cache)
    if args.dump_est is not None:
        args.dump_est.write_text(json.dumps(_dump_est(runs, est_at), indent=1, sort_keys=True))
    pairs, skipped = backtest(runs, est_at, split=args.split)
    data = results(pairs, skipped, runs) | {"split": args.split}
    sys.stdout.write(json.dumps(data, indent=1) + "\n" if args.format == "json" else report(data))
    if args.pairs:
        names = [*FIXED, *(tuned(n, tuple(data["chosen"])) for n in TUNED)]
        for p in pairs:
            errors = " ".join(
                f"{n.split('@')[0]}={(p.predicted[n] - p.realized) / p.realized * 100:+.0f}%"
                for n in names
            )
            print(f"{p.date} {p.suite:<34} k={p.shards} real={p.realized:.0f}s {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
