"""Planner behaviour pinned by value: LPT's order when names sort against the weights, with the
shard-count and partition rules at their boundaries."""

from __future__ import annotations

import pytest
from helpers.sharding import sglang_shards

from ci_budget.sharding.select import (
    lpt,
    makespan,
    min_shards,
    parse_partition,
)


def test_lpt_is_longest_first_even_when_names_sort_the_other_way():
    items = [("a.py", 1.0), ("b.py", 2.0), ("c.py", 3.0), ("d.py", 10.0)]
    assert lpt(items, 2) == [["d.py"], ["c.py", "b.py", "a.py"]]
    assert lpt(list(reversed(items)), 2) == [["d.py"], ["c.py", "b.py", "a.py"]]
    items = [("z.py", 9.0), ("y.py", 8.0), ("x.py", 7.0), ("w.py", 1.0)]
    assert lpt(items, 2) == [["z.py", "w.py"], ["y.py", "x.py"]]


def test_lpt_ties_go_by_name_and_to_the_lowest_shard():
    items = [("c", 5.0), ("a", 5.0), ("b", 5.0), ("d", 1.0)]
    assert lpt(items, 3) == [["a", "d"], ["b"], ["c"]]
    assert lpt([("b", 1.0), ("a", 1.0)], 4) == [["a"], ["b"], [], []]
    assert lpt([], 2) == [[], []]
    with pytest.raises(ValueError, match="shard count must be at least 1, not 0"):
        lpt([("a", 1.0)], 0)


def test_lpt_fills_the_least_loaded_shard_not_the_next_one():
    items = [("a", 10.0), ("b", 6.0), ("c", 5.0), ("d", 4.0)]
    # a -> 0, b -> 1, c -> 1 (6 < 10), d -> 0 (10 < 11)
    assert lpt(items, 2) == [["a", "d"], ["b", "c"]]


@pytest.mark.parametrize(
    "text, want",
    [("0/1", (0, 1)), ("0/4", (0, 4)), ("3/4", (3, 4)), (" 1/2", (1, 2))],
)
def test_parse_partition_accepts(text, want):
    assert parse_partition(text) == want


@pytest.mark.parametrize(
    "text, why",
    [
        ("4/4", "need 0 <= i < n"),
        ("-1/4", "need 0 <= i < n"),
        ("0/0", "need 0 <= i < n"),
        ("0/-1", "need 0 <= i < n"),
        ("1", "must look like i/n"),
        ("1/2/3", "must look like i/n"),
        ("a/2", "must look like i/n"),
        ("", "must look like i/n"),
    ],
)
def test_parse_partition_refuses(text, why):
    with pytest.raises(ValueError, match=why):
        parse_partition(text)


def test_makespan():
    assert makespan([["a", "b"], ["c"]], {"a": 1, "b": 2, "c": 4}) == 4
    assert makespan([["a", "b"], ["c"]], {"a": 1, "b": 5, "c": 4}) == 6
    assert makespan([], {}) == 0


@pytest.mark.parametrize("total, want", [(0, 1), (2700, 1), (2700.001, 2), (5400, 2), (5401, 3)])
def test_sglang_shards_boundaries(total, want):
    assert sglang_shards(total, 3600) == want


def test_min_shards_boundaries():
    items = [("a", 300.0), ("b", 300.0)]
    assert min_shards(items, 800, 0.75) == 1  # 600 fits in exactly 600
    assert min_shards([("a", 300.0), ("b", 300.01)], 800, 0.75) == 2
    assert min_shards(items, 800, 0.5) == 2  # a single item fits in 400 exactly
    assert min_shards([("a", 400.0), ("b", 400.01)], 800, 0.5) == 3  # rule at 0.5
    assert min_shards([("a", 400.01), ("b", 1.0)], 800, 0.5) == 2  # cannot fit: rule
    with pytest.raises(ValueError, match="timeout must be positive, not 0"):
        min_shards(items, 0)
    with pytest.raises(ValueError, match="timeout must be positive"):
        min_shards(items, -5)


def test_min_shards_defaults():
    # 360 360 240 240 240 s in 13 min: LPT needs 3 shards at safety 1.0 (840 | 600 on two).
    items = [(f"t{i}", float(w)) for i, w in enumerate([360, 360, 240, 240, 240])]
    assert min_shards(items, 780, 1.0) == 3
    # safety defaults to 0.75: 1,000 s fit in 1,400 x 0.75 = 1,050 s, not in 1,300 x 0.75.
    assert min_shards([("a", 1000.0)], 1400) == 1
    assert min_shards([("a", 500.0), ("b", 500.0)], 1300) == 2
    # max_shards defaults to 64.
    assert min_shards([(f"t{i}", 10.0) for i in range(100)], 10) == 64
    assert min_shards([("a", 0.1)], 0.5) == 1  # any positive timeout


def test_min_shards_searches_up_from_the_even_split():
    # 5 x 100 s with a 150 s limit needs 5 shards, but sglang's rule caps it at 4.
    items = [(f"t{i}", 100.0) for i in range(5)]
    assert min_shards(items, 200, 0.75) == 4
    assert min_shards(items, 400, 0.75) == 2  # limit 300: 3 + 2 items
    assert min_shards(items, 400, 1.0) == 2  # limit 400: 4 + 1
    assert min_shards(items, 500, 1.0) == 1


def test_min_shards_when_the_rule_caps_it():
    items = [(f"t{i}", 100.0) for i in range(10)]
    assert min_shards(items, 100, 1.0, max_shards=64) == 10  # exactly full shards
    assert min_shards(items, 100, 0.75, max_shards=64) == 14  # nothing fits: the rule
    assert min_shards(items, 100, 1.0, max_shards=3) == 3
    assert min_shards(items, 100, 0.5, max_shards=64) == 20  # stricter than 0.75


def test_lpt_loads_start_at_zero_so_tiny_durations_still_spread():
    # 1e-16 is lost against a load of 1.0: a load that did not start at 0 would tie the shards.
    assert lpt([("a.py", 1e-16), ("b.py", 1e-16)], 2) == [["a.py"], ["b.py"]]


def test_min_shards_a_plan_exactly_at_the_tolerance_fits():
    limit = 100 * 0.75
    at = limit + 1e-9  # the planners' EPS: a makespan this close to the limit fits
    items = [("a.py", 74.0), ("b.py", at - 74.0)]
    assert makespan([["a.py", "b.py"]], dict(items)) == at
    assert min_shards(items, 100, 0.75) == 1
