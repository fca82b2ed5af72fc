"""Shard planning: which registered files run in which shard. Pure and deterministic, so every
shard computes the same plan on its own.

`lpt` is sglang's `auto_partition`: longest first (ties by path) into the least-loaded shard
(ties to the lowest index). It stays the default so shard contents match sglang's exactly.

`plan(..., "best")` is recommended: it starts from LPT and keeps whichever of these is best —
an exact branch and bound for small instances, Karmarkar–Karp largest differencing, and a
move/swap local search between the most loaded shard and the others. All work is bounded by
counts, never by the clock, and items are sorted canonically first, so the result depends only
on the multiset of (key, seconds) pairs, not on their order or on machine speed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

Algorithm = Literal["lpt", "best"]
ALGORITHMS = ("lpt", "best")
EXACT_MAX_ITEMS = 12  # branch and bound is exhaustive up to here
EXACT_NODE_LIMIT = 200_000  # and stops (keeping the best so far) after this many nodes
SEARCH_ROUNDS = 2_000  # local-search improvements at most
EPS = 1e-9  # loads are sums of floats: only count clear improvements


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


def lower_bound(weights: Iterable[float], k: int) -> float:
    """No plan over k shards can finish sooner than the longest item or an even split."""
    ws = list(weights)
    if not ws:
        return 0.0
    return max(max(ws), math.fsum(ws) / k)


def makespan(plan: Sequence[Sequence[str]], weights: Mapping[str, float]) -> float:
    """The load of the most loaded shard."""
    return max((math.fsum(weights[key] for key in shard) for shard in plan), default=0.0)


def plan(
    items: Sequence[tuple[str, float]], shards: int, algorithm: str = "best"
) -> list[list[str]]:
    """Split (key, seconds) items into `shards` lists with the named algorithm."""
    if algorithm == "lpt":
        return lpt(items, shards)
    if algorithm != "best":
        raise ValueError(f"unknown planner algorithm {algorithm!r} (use one of {ALGORITHMS})")
    if shards < 1:
        raise ValueError(f"shard count must be at least 1, not {shards}")
    for key, seconds in items:
        if not seconds >= 0 or math.isinf(seconds):
            raise ValueError(f"{key}: weight must be a finite number >= 0, not {seconds!r}")
    ordered = sorted(items, key=lambda kv: (-kv[1], kv[0]))
    weights = [w for _, w in ordered]
    base = _assignment_from_lpt(weights, shards)
    best, best_span = base, _span(base, weights, shards)
    candidates = []
    if len(weights) <= EXACT_MAX_ITEMS:
        exact, _ = _exact(weights, shards, best_span)
        if exact is not None:
            candidates.append(exact)
    candidates.append(_karmarkar_karp(weights, shards))
    candidates.append(base)
    for cand in candidates:
        cand = _local_search(cand, weights, shards)
        span = _span(cand, weights, shards)
        if span < best_span - EPS:
            best, best_span = cand, span
    out: list[list[str]] = [[] for _ in range(shards)]
    for index, shard in enumerate(best):
        out[shard].append(ordered[index][0])
    # Shard order is free in `best`: heaviest first reads well. Within a shard keys keep the
    # canonical (-seconds, key) order they were appended in.
    loads = _loads(best, weights, shards)
    order = sorted(range(shards), key=lambda i: (-loads[i], out[i]))
    return [out[i] for i in order]


def _assignment_from_lpt(weights: list[float], k: int) -> list[int]:
    loads = [0.0] * k
    assign = []
    for w in weights:
        i = min(range(k), key=loads.__getitem__)
        assign.append(i)
        loads[i] += w
    return assign


def _loads(assign: list[int], weights: list[float], k: int) -> list[float]:
    loads = [0.0] * k
    for index, shard in enumerate(assign):
        loads[shard] += weights[index]
    return loads


def _span(assign: list[int], weights: list[float], k: int) -> float:
    return max(_loads(assign, weights, k))  # k >= 1


def _karmarkar_karp(weights: list[float], k: int) -> list[int]:
    """Largest differencing for k-way: merge the two partial partitions that differ most,
    pairing the heaviest subset of one with the lightest of the other."""
    if not weights:
        return []
    heap = []
    for index, w in enumerate(weights):
        subsets = [(w, (index,))] + [(0.0, ())] * (k - 1)
        heap.append((-w, index, subsets))  # spread = w; index breaks ties deterministically
    heapq.heapify(heap)
    counter = len(weights)
    while len(heap) > 1:
        _, _, a = heapq.heappop(heap)
        _, _, b = heapq.heappop(heap)
        a_desc = sorted(a, key=lambda s: (-s[0], s[1]))
        b_asc = sorted(b, key=lambda s: (s[0], s[1]))
        merged = [(a_desc[j][0] + b_asc[j][0], a_desc[j][1] + b_asc[j][1]) for j in range(k)]
        low = min(s[0] for s in merged)
        merged = [(s[0] - low, s[1]) for s in merged]
        spread = max(s[0] for s in merged)
        heapq.heappush(heap, (-spread, counter, merged))
        counter += 1
    assign = [0] * len(weights)
    final = sorted(heap[0][2], key=lambda s: (-s[0], s[1]))
    for shard, (_, members) in enumerate(final):
        for index in members:
            assign[index] = shard
    return assign


def _local_search(assign: list[int], weights: list[float], k: int) -> list[int]:
    """Move or swap one item between the most loaded shard and another while that lowers the
    pair's larger load. Each step lowers the sum of squared loads, so it ends."""
    assign = list(assign)
    loads = _loads(assign, weights, k)
    for _ in range(SEARCH_ROUNDS):
        top = max(range(k), key=lambda i: (loads[i], -i))
        members = [i for i, s in enumerate(assign) if s == top]
        best = None  # (new pair max, shard, item in top, item in other or -1)
        for other in range(k):
            if other == top:
                continue
            gap = loads[top] - loads[other]
            if gap <= EPS:
                continue
            for a in members:
                wa = weights[a]
                if EPS < wa < gap - EPS:
                    new_max = max(loads[top] - wa, loads[other] + wa)
                    cand = (new_max, other, a, -1)
                    if best is None or cand < best:
                        best = cand
            for b, sb in enumerate(assign):
                if sb != other:
                    continue
                for a in members:
                    d = weights[a] - weights[b]
                    if EPS < d < gap - EPS:
                        new_max = max(loads[top] - d, loads[other] + d)
                        cand = (new_max, other, a, b)
                        if best is None or cand < best:
                            best = cand
        if best is None or best[0] >= loads[top] - EPS:
            break
        _, other, a, b = best
        assign[a] = other
        loads[top] -= weights[a]
        loads[other] += weights[a]
        if b >= 0:
            assign[b] = top
            loads[top] += weights[b]
            loads[other] -= weights[b]
    return assign


def _exact(weights: list[float], k: int, upper: float) -> tuple[list[int] | None, int]:
    """Branch and bound over items in decreasing order; an empty shard is tried once (the
    others are symmetric). Returns a plan strictly better than `upper` (or None) and the
    nodes searched."""
    n = len(weights)
    if n == 0:
        return None, 0
    floor = lower_bound(weights, k)
    loads = [0.0] * k
    assign = [0] * n
    state = {"best": upper - EPS, "plan": None, "nodes": 0}

    def go(i: int, used: int) -> bool:
        state["nodes"] += 1
        if state["nodes"] > EXACT_NODE_LIMIT:
            return True
        if i == n:
            span = max(loads)
            if span < state["best"]:
                state["best"], state["plan"] = span, list(assign)
            return state["best"] <= floor + EPS
        tried: set[float] = set()
        for shard in range(min(used + 1, k)):
            load = loads[shard]
            if load in tried or load + weights[i] >= state["best"]:
                continue
            tried.add(load)
            loads[shard] += weights[i]
            assign[i] = shard
            if go(i + 1, max(used, shard + 1)):
                return True
            loads[shard] -= weights[i]
        return False

    go(0, 0)
    return state["plan"], state["nodes"]


def min_shards(
    items: Sequence[tuple[str, float]],
    timeout_s: float,
    safety: float = 0.75,
    algorithm: str = "lpt",
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
        if makespan(plan(items, k, algorithm), weights) <= limit + EPS:
            return k
    return rule
