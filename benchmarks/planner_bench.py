"""Compare the `best` shard planner with sglang's LPT on sglang-shaped suites.

    python benchmarks/planner_bench.py [--quick]

Instances: hundreds of files with heavy-tailed est_time between 5 s and 2,000 s (log-normal and
Pareto, clipped), fixed seeds. For each instance and shard count k it prints LPT's and best's
makespan, best/LPT, best/lower bound, and the time each took (best's as a multiple of LPT's,
measured in this run). Then shard counts: sglang's rule ceil(sum / (0.75 x timeout)) against
the fewest shards whose best plan fits 0.75 x timeout and 0.95 x timeout.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ci_budget.sharding.planners import lower_bound, lpt, makespan, min_shards, plan  # noqa: E402


def sglang_shards(total_s: float, timeout_s: float) -> int:
    """sglang's rule for a suite's shard count."""
    return max(1, math.ceil(total_s / (0.75 * timeout_s)))


LOW, HIGH = 5.0, 2000.0


def lognormal(seed: int, n: int) -> list[tuple[str, float]]:
    rnd = random.Random(seed)
    return [(f"f{i:04d}.py", min(HIGH, max(LOW, rnd.lognormvariate(4.6, 1.1)))) for i in range(n)]


def pareto(seed: int, n: int) -> list[tuple[str, float]]:
    rnd = random.Random(seed)
    return [(f"f{i:04d}.py", min(HIGH, max(LOW, 30 * rnd.paretovariate(1.3)))) for i in range(n)]


def instances(quick: bool):
    sizes = (60, 200) if quick else (60, 200, 500)
    for name, gen in (("lognormal", lognormal), ("pareto", pareto)):
        for n in sizes:
            for seed in (1, 2) if quick else (1, 2, 3):
                yield f"{name}-n{n}-s{seed}", gen(seed, n)


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, smaller instances")
    args = parser.parse_args()
    ks = (2, 4, 8, 16)
    print(
        f"{'instance':<20} {'k':>3} {'LPT':>9} {'best':>9} {'best/LPT':>9} {'best/LB':>8} "
        f"{'LPT ms':>7} {'best ms':>8} {'x LPT':>6}"
    )
    rows = worse = within = 0
    for label, items in instances(args.quick):
        weights = dict(items)
        for k in ks:
            a, ta = timed(lpt, items, k)
            b, tb = timed(plan, items, k, "best")
            ma, mb = makespan(a, weights), makespan(b, weights)
            lb = lower_bound(weights.values(), k)
            rows += 1
            worse += mb > ma + 1e-9
            within += mb <= lb * 1.01
            print(
                f"{label:<20} {k:>3} {ma:>9.1f} {mb:>9.1f} {mb / ma:>9.4f} {mb / lb:>8.4f} "
                f"{ta * 1e3:>7.2f} {tb * 1e3:>8.1f} {tb / max(ta, 1e-9):>6.0f}"
            )
    print(f"\nbest worse than LPT: {worse}/{rows}; best within 1% of lower bound: {within}/{rows}")

    print(
        f"\n{'instance':<20} {'timeout':>7} {'sglang':>6} {'best@.75':>8} {'lpt@.75':>7} "
        f"{'best@.95':>8}"
    )
    over = 0
    for label, items in instances(args.quick):
        total = sum(w for _, w in items)
        for minutes in (30, 60):
            timeout = minutes * 60.0
            rule = sglang_shards(total, timeout)
            best75 = min_shards(items, timeout, 0.75, "best", max_shards=10_000)
            lpt75 = min_shards(items, timeout, 0.75, "lpt", max_shards=10_000)
            best95 = min_shards(items, timeout, 0.95, "best", max_shards=10_000)
            over += max(best75, best95) > rule
            print(f"{label:<20} {minutes:>5}m {rule:>6} {best75:>8} {lpt75:>7} {best95:>8}")
    print(f"\nshard counts above sglang's rule: {over}")
    return 1 if worse or over else 0


def run(quick: bool = False) -> list:
    """Summary rows for `python -m benchmarks`: LPT is the baseline, measured in the same run."""
    from benchmarks.common import Row

    lpt_total = best_total = lpt_time = best_time = 0.0
    rows = worse = within = over = 0
    for _label, items in instances(quick):
        weights = dict(items)
        for k in (2, 4, 8, 16):
            a, ta = timed(lpt, items, k)
            b, tb = timed(plan, items, k, "best")
            ma, mb = makespan(a, weights), makespan(b, weights)
            lpt_total, best_total = lpt_total + ma, best_total + mb
            lpt_time, best_time = lpt_time + ta, best_time + tb
            rows += 1
            worse += mb > ma + 1e-9
            within += mb <= lower_bound(weights.values(), k) * 1.01
        total = sum(w for _, w in items)
        for minutes in (30, 60):
            rule = sglang_shards(total, minutes * 60.0)
            over += min_shards(items, minutes * 60.0, 0.75, "best", max_shards=10_000) > rule
    note = (
        f"{rows} instances (heavy-tailed est_time 5-2,000 s, 60-500 files, k = 2-16): best worse "
        f"than LPT on {worse}, within 1 % of max(max est, sum/k) on {within}; shard counts "
        f"above sglang's rule: {over}; planning time {best_time:.2f}s vs LPT {lpt_time:.3f}s"
    )
    return [
        Row("planner: sum of makespans, best vs LPT", lpt_total, best_total, None, note,
            target=1.0, ok=not worse and not over, unit="s"),
    ]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
