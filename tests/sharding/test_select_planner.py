"""Planner invariants on small fixed instances (no timings)."""

from __future__ import annotations

import random

import pytest
from helpers.registry import reg
from helpers.sharding import sglang_shards

from ci_budget.history.model import History
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.sharding.dispatch import PlanNumbers
from ci_budget.sharding.select import (
    lpt,
    makespan,
    min_shards,
    parse_partition,
)


def _instance(seed: int, n: int) -> list[tuple[str, float]]:
    rnd = random.Random(seed)
    return [(f"test/registered/t{i:03d}.py", float(rnd.randint(5, 900))) for i in range(n)]


def test_lpt_matches_sglang_auto_partition():
    items = [("a.py", 10), ("b.py", 9), ("c.py", 8), ("d.py", 7), ("e.py", 3), ("f.py", 3)]
    # longest first, ties by path, into the least loaded shard (lowest index on ties)
    assert lpt(items, 2) == [["a.py", "d.py", "e.py"], ["b.py", "c.py", "f.py"]]
    assert parse_partition("1/3") == (1, 3)
    with pytest.raises(ValueError, match="i/n"):
        parse_partition("3")


def test_makespan_and_bad_arguments():
    assert makespan([[], []], {}) == 0.0
    assert makespan([["a"], ["b", "c"]], {"a": 5.0, "b": 2.0, "c": 4.0}) == 6.0
    with pytest.raises(ValueError, match="at least 1"):
        lpt([("a", 1.0)], 0)


def test_min_shards_never_exceeds_sglang_rule():
    timeout = 3600.0
    for seed in range(8):
        items = _instance(seed, 50)
        total = sum(w for _, w in items)
        rule = sglang_shards(total, timeout)
        k = min_shards(items, timeout, 0.75)
        assert 1 <= k <= rule
        fits = makespan(lpt(items, k), dict(items)) <= 0.75 * timeout
        assert fits or k == rule  # only the rule's cap may leave a plan over the limit
        # a looser safety needs no more shards
        assert min_shards(items, timeout, 1.0) <= k


def test_min_shards_when_one_item_cannot_fit():
    items = [("huge", 5000.0), ("a", 100.0)]
    assert min_shards(items, 3600, 0.75) == sglang_shards(5100, 3600) == 2
    assert min_shards(items, 3600, 0.75, max_shards=1) == 1
    assert min_shards([], 3600) == 1


def test_min_shards_when_lpt_overruns_at_the_rule():
    # LPT packs 3,3,2,2,2 into 7|5 on two shards: over the 600 s limit, but the rule caps it at 2
    items = [("a", 300.0), ("b", 300.0), ("c", 200.0), ("d", 200.0), ("e", 200.0)]
    assert min_shards(items, 800.0, 0.75) == 2
    assert makespan(lpt(items, 2), dict(items)) == 700


def test_weights_prefer_measured_p90():
    history = History()
    for i, elapsed in enumerate([100.0, 110.0, 120.0, 500.0]):
        status = "timeout" if elapsed == 500.0 else "passed"
        history.add_results(
            RunResults(
                meta=RunMeta(commit=f"c{i}"),
                files=[FileResult(path="a.py", suite="s", elapsed=elapsed, status=status)],
            )
        )
    regs = [reg("a.py", 600, "s"), reg("b.py", 300, "s"), reg("a.py", 50, "t")]
    weights = PlanNumbers(history=history).weights(regs)
    assert weights == {("a.py", "s"): 120.0}  # p90 of the passing runs only; the rest: est_time
    assert PlanNumbers().weights([reg("b.py", 30)]) == {}
