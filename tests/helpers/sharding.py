"""Shard counts as the tests state them: sglang's own rule, and one suite's count through the
dispatch the plan uses."""

from __future__ import annotations

import math

from ci_budget.sharding.dispatch import suite_shards


def sglang_shards(total_s: float, timeout_s: float) -> int:
    """sglang's rule for a suite's shard count."""
    return max(1, math.ceil(total_s / (0.75 * timeout_s)))


def shard_count(regs, config, weights=None) -> int:
    """Shards for one suite's registrations (see sharding.dispatch)."""
    return suite_shards(regs[0].suite, regs, config, weights).size
