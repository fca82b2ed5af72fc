"""Planner behaviour pinned by value: LPT's order when names sort against the weights, and
instances that only one part of the `best` planner solves (so none of them can be dropped
unnoticed), with the shard-count and partition rules at their boundaries."""

from __future__ import annotations

import pytest
from helpers.sharding import sglang_shards

from ci_budget.sharding import planners
from ci_budget.sharding.model import PlanNumbers
from ci_budget.sharding.planners import (
    ALGORITHMS,
    lower_bound,
    lpt,
    makespan,
    min_shards,
    parse_partition,
    plan,
)


def named(weights):
    return [(f"t{i:02d}", float(w)) for i, w in enumerate(weights)]


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


def test_best_plan_order_heaviest_shard_first_and_keys_longest_first():
    result = plan([("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 10.0)], 2, "best")
    assert result == [["d"], ["c", "b", "a"]]
    result = plan([("x", 2.0), ("y", 2.0)], 2, "best")
    assert result == [["x"], ["y"]]  # equal loads: by contents


def test_only_karmarkar_karp_reaches_the_bound_here():
    # LPT gives 129 and local search from it 126; largest differencing finds 125.
    items = named([39, 38, 38, 37, 37, 35, 35, 27, 22, 21, 18, 15, 11, 2])
    weights = dict(items)
    assert lower_bound(weights.values(), 3) == 125
    assert makespan(lpt(items, 3), weights) == 129
    assert makespan(plan(items, 3, "best"), weights) == 125


def test_only_the_local_search_reaches_the_bound_here():
    # LPT and largest differencing both give 112 (so does the search from the latter);
    # the search from LPT finds 111.
    items = named([37, 31, 31, 27, 23, 19, 18, 10, 8, 6, 5, 5, 2])
    weights = dict(items)
    assert lower_bound(weights.values(), 2) == 111
    assert makespan(lpt(items, 2), weights) == 112
    assert makespan(plan(items, 2, "best"), weights) == 111


def test_twelve_items_are_solved_exactly_where_the_heuristics_miss():
    items = named([35, 21, 19, 14, 14, 13, 11, 11, 9, 9, 1, 1])
    weights = dict(items)
    assert planners.EXACT_MAX_ITEMS == 12
    assert makespan(lpt(items, 3), weights) > 53
    assert makespan(plan(items, 3, "best"), weights) == 53  # optimal; the bound is 52.7


def test_best_keeps_every_item_once_on_the_special_instances():
    for weights, k in [
        ([39, 38, 38, 37, 37, 35, 35, 27, 22, 21, 18, 15, 11, 2], 3),
        ([37, 31, 31, 27, 23, 19, 18, 10, 8, 6, 5, 5, 2], 2),
        ([35, 21, 19, 14, 14, 13, 11, 11, 9, 9, 1, 1], 3),
    ]:
        items = named(weights)
        result = plan(items, k, "best")
        assert len(result) == k
        assert sorted(sum(result, [])) == sorted(key for key, _ in items)
        loads = [sum(dict(items)[key] for key in shard) for shard in result]
        assert loads == sorted(loads, reverse=True)
        for shard in result:
            assert [dict(items)[key] for key in shard] == sorted(
                (dict(items)[key] for key in shard), reverse=True
            )


def test_zero_weights_and_single_shard():
    # Nothing to balance: LPT's plan stays, and equal loads order shards by their contents.
    assert plan([("a", 0.0), ("b", 0.0)], 2, "best") == [[], ["a", "b"]]
    assert plan([("b", 3.0), ("a", 4.0)], 1, "best") == [["a", "b"]]
    assert plan([("b", 3.0), ("a", 4.0)], 1, "lpt") == [["a", "b"]]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, -1e-12])
def test_best_refuses_weights_that_are_not_finite_and_non_negative(bad):
    with pytest.raises(ValueError, match=r"^b: weight must be a finite number >= 0, not "):
        plan([("a", 1.0), ("b", bad)], 2, "best")


def test_algorithm_names():
    assert ALGORITHMS == ("lpt", "best")
    with pytest.raises(ValueError, match=r"unknown planner algorithm 'LPT' \(use one of "):
        plan([("a", 1.0)], 1, "LPT")
    with pytest.raises(ValueError, match="shard count must be at least 1, not -1"):
        plan([("a", 1.0)], -1, "best")
    assert plan([("a", 1.0)], 1) == [["a"]]  # "best" by default


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


def test_lower_bound_and_makespan():
    assert lower_bound([3.0, 3.0, 3.0], 3) == 3
    assert lower_bound([3.0, 3.0, 3.0], 2) == 4.5
    assert lower_bound([10.0], 4) == 10
    assert lower_bound(iter([1.0, 2.0]), 1) == 3
    assert makespan([["a", "b"], ["c"]], {"a": 1, "b": 2, "c": 4}) == 4
    assert makespan([["a", "b"], ["c"]], {"a": 1, "b": 5, "c": 4}) == 6
    assert makespan([], {}) == 0


@pytest.mark.parametrize("total, want", [(0, 1), (2700, 1), (2700.001, 2), (5400, 2), (5401, 3)])
def test_sglang_shards_boundaries(total, want):
    assert sglang_shards(total, 3600) == want


def test_min_shards_boundaries():
    items = [("a", 300.0), ("b", 300.0)]
    assert min_shards(items, 800, 0.75, "best") == 1  # 600 fits in exactly 600
    assert min_shards([("a", 300.0), ("b", 300.01)], 800, 0.75, "best") == 2
    assert min_shards(items, 800, 0.5, "best") == 2  # a single item fits in 400 exactly
    assert min_shards([("a", 400.0), ("b", 400.01)], 800, 0.5, "best") == 3  # rule at 0.5
    assert min_shards([("a", 400.01), ("b", 1.0)], 800, 0.5, "best") == 2  # cannot fit: rule
    with pytest.raises(ValueError, match="timeout must be positive, not 0"):
        min_shards(items, 0)
    with pytest.raises(ValueError, match="timeout must be positive"):
        min_shards(items, -5)


def test_min_shards_searches_up_from_the_even_split():
    # 5 x 100 s with a 150 s limit needs 5 shards, but sglang's rule caps it at 4.
    items = [(f"t{i}", 100.0) for i in range(5)]
    assert min_shards(items, 200, 0.75, "best") == 4
    assert min_shards(items, 400, 0.75, "best") == 2  # limit 300: 3 + 2 items
    assert min_shards(items, 400, 0.75, "lpt") == 2
    assert min_shards(items, 400, 1.0, "best") == 2  # limit 400: 4 + 1
    assert min_shards(items, 500, 1.0, "best") == 1


def test_min_shards_when_the_rule_caps_it():
    items = [(f"t{i}", 100.0) for i in range(10)]
    assert min_shards(items, 100, 1.0, "best", max_shards=64) == 10  # exactly full shards
    assert min_shards(items, 100, 0.75, "best", max_shards=64) == 14  # nothing fits: the rule
    assert min_shards(items, 100, 1.0, "best", max_shards=3) == 3
    assert min_shards(items, 100, 0.5, "best", max_shards=64) == 20  # stricter than 0.75


def test_weights_use_a_seeded_estimate_only_where_nothing_was_measured():
    from ci_budget.history.model import Estimate, History
    from ci_budget.models import Registration

    def registration(file, suite, est):
        return Registration(
            file=file, line=1, function="register_cuda_ci", backend="cuda", est_time=est,
            suite=suite,
        )  # fmt: skip

    history = History()
    history.estimates = {
        ("a.py", "s"): Estimate(file="a.py", suite="s", seconds=42.5, source="model.json"),
        ("b.py", "t"): Estimate(file="b.py", suite="t", seconds=7.0, source="model.json"),
    }
    regs = [registration("a.py", "s", 600), registration("a.py", "t", 60),
            registration("b.py", "s", 30), registration("b.py", "t", 30)]  # fmt: skip
    assert list(PlanNumbers(history=history).weights(regs).values()) == [42.5, 60.0, 30.0, 7.0]


def test_exact_search_stops_at_its_node_limit(monkeypatch):
    # The search on this instance finds the optimum (53) at its 151st node: one node less and
    # it stops with the best plan it had found by then, 54.
    items = named([35, 21, 19, 14, 14, 13, 11, 11, 9, 9, 1, 1])
    weights = dict(items)
    assert planners.EXACT_NODE_LIMIT == 200_000
    monkeypatch.setattr(planners, "EXACT_NODE_LIMIT", 151)
    assert makespan(plan(items, 3, "best"), weights) == 53
    monkeypatch.setattr(planners, "EXACT_NODE_LIMIT", 150)
    assert makespan(plan(items, 3, "best"), weights) == 54
