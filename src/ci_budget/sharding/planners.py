"""Shard planning: which registered files run in which shard. Pure and deterministic, so every
shard computes the same plan on its own.

`lpt` is sglang's `auto_partition`: longest first (ties by path) into the least-loaded shard
(ties to the lowest index), so shard contents match sglang's exactly. (A second, "best" planner
went: on sglang's real suites it saved no shard and at most 7 % of a makespan; see
docs/performance.md.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

EPS = 1e-9  # loads are sums of floats: a plan within this of the limit fits


def lpt(items: Sequence[tuple[str, float]], shards: int) -> list[list[str]]:
    """Split (key, seconds) items into `shards` lists, sglang-compatible."""
    if shards < 1:
        raise ValueError(f"shard count must be at least 1, not {shards}")
    plan: list[list[str]] = [[] for _ in range(shards)]
    loads = [0.0] * shards
    for key, seconds in sorted(items, key=lambda kv: (-kv[1], kv[0])):
        i = min(range(shards), key=loads.__getitem__)
        plan[i].append(key)
        loads[i] += seconds
    return plan


def parse_partition(text: str) -> tuple[int, int]:
    """'i/n' with 0 <= i < n (sglang's --auto-partition-id / --auto-partition-size)."""
    try:
        left, right = text.split("/")
        index, count = int(left), int(right)
    except ValueError:
        raise ValueError(f"partition must look like i/n (e.g. 0/4), not {text!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"partition {text!r}: need 0 <= i < n")
    return index, count


def makespan(plan: Sequence[Sequence[str]], weights: Mapping[str, float]) -> float:
    """The load of the most loaded shard."""
    return max((math.fsum(weights[key] for key in shard) for shard in plan), default=0.0)


def min_shards(
    items: Sequence[tuple[str, float]],
    timeout_s: float,
    safety: float = 0.75,
    max_shards: int = 64,
) -> int:
    """The fewest shards whose planned makespan fits in `timeout_s * safety`.

    Never more than sglang's rule, ceil(sum / (0.75 * timeout)) (capped by `max_shards`), or
    the same rule at `safety` when that is stricter than 0.75: when nothing fits (an item
    longer than the limit), that count is the answer.
    """
    if timeout_s <= 0:
        raise ValueError(f"timeout must be positive, not {timeout_s!r}")
    total = math.fsum(w for _, w in items)
    rule = max(1, min(max_shards, math.ceil(total / (min(0.75, safety) * timeout_s))))
    limit = timeout_s * safety
    if not items or max(w for _, w in items) > limit:
        return rule
    weights = {key: w for key, w in items}
    start = max(1, math.ceil(total / limit - EPS))
    for k in range(start, rule + 1):
        if makespan(lpt(items, k), weights) <= limit + EPS:
            return k
    return rule
