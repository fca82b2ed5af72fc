"""Shard planning: which registered files run in which shard. Pure and deterministic, so every
shard computes the same plan on its own.

`lpt` is sglang's `auto_partition`: longest first (ties by path) into the least-loaded shard
(ties to the lowest index).
"""

from __future__ import annotations

from collections.abc import Sequence


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
