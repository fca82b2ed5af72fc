"""The `best` planner's parts pinned by value on small instances: Karmarkar–Karp's pairing,
the local search's moves and swaps, the exact search's result and the nodes it needs, and
which candidate wins a tie. `plan` only keeps the best of them, so a part that goes wrong can
hide behind another; here each answers on its own."""

from __future__ import annotations

from ci_budget.sharding import planners
from ci_budget.sharding.planners import (
    _exact,
    _karmarkar_karp,
    _local_search,
    min_shards,
    plan,
)


def test_karmarkar_karp_by_hand():
    # 8,7 -> (1 | 0); 6,5 -> (1 | 0); 4 with the first pair: 4+0 | 1 -> spread 3; with the
    # second: 3+0 | 1+0 -> 2. Shard 0 holds 4, 7, 5 (16), shard 1 holds 8, 6 (14).
    assert _karmarkar_karp([8.0, 7.0, 6.0, 5.0, 4.0], 2) == [1, 0, 1, 0, 0]
    assert _karmarkar_karp([], 3) == []
    assert _karmarkar_karp([5.0], 3) == [0]


def test_karmarkar_karp_on_three_and_four_shards():
    weights = [38.0, 35.0, 26.0, 24.0, 21.0, 10.0, 7.0, 5.0, 4.0]
    assert _karmarkar_karp(weights, 3) == [0, 1, 2, 2, 1, 0, 0, 2, 0]
    weights = [33.0, 28.0, 27.0, 16.0, 14.0, 6.0, 6.0, 5.0, 4.0, 3.0]
    assert _karmarkar_karp(weights, 3) == [1, 0, 2, 0, 1, 2, 2, 2, 0, 2]
    weights = [38.0, 38.0, 37.0, 37.0, 36.0, 28.0, 26.0, 15.0, 8.0, 4.0, 4.0]
    assert _karmarkar_karp(weights, 4) == [2, 3, 0, 1, 0, 2, 1, 3, 3, 3, 1]


def test_local_search_moves_from_the_most_loaded_shard():
    weights = [36.0, 27.0, 19.0, 15.0, 9.0, 4.0, 3.0]
    assert _local_search([0] * 7, weights, 2) == [1, 0, 1, 0, 0, 0, 0]
    weights = [38.0, 37.0, 36.0, 35.0, 20.0, 12.0, 10.0, 8.0, 7.0]
    assert _local_search([0] * 9, weights, 3) == [2, 1, 1, 2, 0, 0, 0, 0, 0]
    weights = [40.0, 37.0, 37.0, 36.0, 24.0, 14.0, 13.0, 7.0, 5.0, 4.0]
    assert _local_search([0] * 10, weights, 3) == [2, 1, 1, 2, 0, 0, 0, 0, 0, 0]
    # A move that lowers the pair's larger load to the other's: 4 moves (11 | 11).
    assert _local_search([1, 0, 0, 0], [7.0, 6.0, 5.0, 4.0], 2) == [1, 0, 0, 1]


def test_local_search_swaps_when_no_move_helps():
    # 7 + 5 | 6 + 4: no item is lighter than the gap of 2; swapping 7 and 6 (the first of two
    # equal swaps) gives 11 | 11.
    assert _local_search([0, 1, 0, 1], [7.0, 6.0, 5.0, 4.0], 2) == [1, 0, 0, 1]
    # Unsorted weights: the swap takes item 0 (1 s) back to the top shard.
    assert _local_search([1, 0, 0], [1.0, 5.0, 4.0], 2) == [0, 1, 0]
    # Equal loads: nothing to do.
    assert _local_search([0, 1], [3.0, 3.0], 2) == [0, 1]


def test_exact_search_results_and_nodes():
    assert _exact([], 2, 10.0) == (None, 0)
    assert _exact([5.0], 2, 10.0) == ([0], 2)
    assert _exact([5.0], 2, 5.0) == (None, 1)  # nothing strictly better than 5
    # 3 3 | 2 2 2 reaches the bound (6): the search stops there.
    assert _exact([3.0, 3.0, 2.0, 2.0, 2.0], 2, 7.0) == ([0, 0, 1, 1, 1], 6)
    assert _exact([3.0, 3.0, 2.0, 2.0, 2.0], 2, 1e9) == ([0, 0, 1, 1, 1], 12)
    weights = [9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0]
    assert _exact(weights, 3, 16.0) == ([0, 1, 2, 1, 0, 2, 2], 20)
    assert _exact(weights, 3, 1e9) == ([0, 1, 2, 1, 0, 2, 2], 132)
    weights = [35.0, 21.0, 19.0, 14.0, 14.0, 13.0, 11.0, 11.0, 9.0, 9.0, 1.0, 1.0]
    assert _exact(weights, 3, 55.0) == ([0, 1, 1, 2, 2, 1, 2, 2, 0, 0, 2, 2], 243)


def test_the_first_candidate_keeps_a_tie():
    # The exact search reaches 57 | 57 first; the local search from LPT reaches 57 | 57 too,
    # with other files: the first one found stays.
    weights = [11, 1, 9, 20, 6, 11, 18, 19, 19]
    items = [(f"t{i}", float(w)) for i, w in enumerate(weights)]
    assert plan(items, 2) == [["t3", "t7", "t6"], ["t8", "t0", "t5", "t2", "t4", "t1"]]


def test_min_shards_defaults():
    assert (planners.EXACT_MAX_ITEMS, planners.SEARCH_ROUNDS, planners.EPS) == (12, 2000, 1e-9)
    # 360 360 240 240 240 s in 13 min: LPT (the default) needs 3 shards at safety 1.0.
    items = [(f"t{i}", float(w)) for i, w in enumerate([360, 360, 240, 240, 240])]
    assert min_shards(items, 780, 1.0) == 3
    assert min_shards(items, 780, 1.0, "best") == 2
    # safety defaults to 0.75: 1,000 s fit in 1,400 x 0.75 = 1,050 s, not in 1,300 x 0.75.
    assert min_shards([("a", 1000.0)], 1400) == 1
    assert min_shards([("a", 500.0), ("b", 500.0)], 1300) == 2
    # max_shards defaults to 64.
    assert min_shards([(f"t{i}", 10.0) for i in range(100)], 10) == 64
    assert min_shards([("a", 0.1)], 0.5) == 1  # any positive timeout


def test_exact_search_keeps_the_first_of_equal_plans():
    # The optimum, 11, is above the bound (9.7), so the search is exhaustive; 8+2+1 | 7+4 | 7
    # comes first, 8 | 7+4 | 7+2+1 later with the same makespan.
    assert _exact([8.0, 7.0, 7.0, 4.0, 2.0, 1.0], 3, 1e9) == ([0, 1, 2, 1, 0, 0], 83)


def test_exact_search_stops_counting_at_its_node_limit(monkeypatch):
    monkeypatch.setattr(planners, "EXACT_NODE_LIMIT", 10)
    plan_found, nodes = _exact([8.0, 7.0, 7.0, 4.0, 2.0, 1.0], 3, 1e9)
    assert nodes == 11  # the node past the limit ends the search
    # The best plan among the leaves reached by then: only the first, 27 | 2 | 0.
    assert plan_found == [0, 0, 0, 0, 1, 0]
