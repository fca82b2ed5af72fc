"""The guard cases, shared by the tests and by `python -m bitexact_model.measure`.

Each case runs requests through a `PrefixCache` and compares the logprobs of every position the
cached path computed against the uncached reference. Returns a `CaseResult`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bitexact_model.cache import PrefixCache
from bitexact_model.model import TinyHybridModel


@dataclass
class CaseResult:
    kl: float  # mean over compared positions of KL(uncached || cached)
    positions: int
    hits: list[int]  # matched prefix length of each request after the first


def avg_kl(reference: np.ndarray, cached: np.ndarray) -> float:
    """Mean KL(p || q) over positions. Exactly 0.0 when the logprobs are bit-identical."""
    if reference.shape != cached.shape:
        raise ValueError(f"shape mismatch: {reference.shape} vs {cached.shape}")
    per_position = np.sum(np.exp(reference) * (reference - cached), axis=-1)
    return float(np.mean(per_position))


class _Compare:
    """Collects (reference, cached) rows across several requests of one case."""

    def __init__(self, model: TinyHybridModel):
        self.model = model
        self.refs: list[np.ndarray] = []
        self.got: list[np.ndarray] = []
        self.hits: list[int] = []

    def add(self, tokens, start: int, rows, reference: np.ndarray | None = None) -> None:
        ref = self.model.score(tokens) if reference is None else reference
        self.refs.append(ref[start : start + len(rows)])
        self.got.append(self.model.backend.to_numpy(rows))
        self.hits.append(start)

    def result(self) -> CaseResult:
        ref, got = np.concatenate(self.refs), np.concatenate(self.got)
        return CaseResult(kl=avg_kl(ref, got), positions=len(ref), hits=self.hits)


def logprobs_match(model: TinyHybridModel, cache: PrefixCache) -> CaseResult:
    """A shared 16-token system prompt, then a question that reuses it."""
    system = model.tokens(1, 16)
    cache.prefill(system)
    request = system + model.tokens(2, 20)
    cmp = _Compare(model)
    _, start, rows = cache.prefill(request)
    cmp.add(request, start, rows)
    return cmp.result()


def prefill_cache_hit(model: TinyHybridModel, cache: PrefixCache) -> CaseResult:
    """A second request hits the snapshot chunked prefill left mid-way through the first."""
    first = model.tokens(3, 2 * cache.chunk)
    cache.prefill(first)
    request = first[: cache.chunk] + model.tokens(4, 11)
    cmp = _Compare(model)
    _, start, rows = cache.prefill(request)
    cmp.add(request, start, rows)
    return cmp.result()


def decode_cache_hit(model: TinyHybridModel, cache: PrefixCache) -> CaseResult:
    """A follow-up request resumes from the state a greedy decode left behind."""
    prompt = model.tokens(5, 10)
    state, _, rows = cache.prefill(prompt)
    generated, _ = cache.decode(state, prompt, rows[-1], 14)
    request = prompt + generated + model.tokens(6, 7)
    cmp = _Compare(model)
    _, start, rows = cache.prefill(request)
    cmp.add(request, start, rows)
    return cmp.result()


def multiturn_branching(model: TinyHybridModel, cache: PrefixCache) -> CaseResult:
    """Two conversations branch from one 18-token turn, then each takes a second turn."""
    shared = model.tokens(7, 18)
    cache.prefill(shared)
    branch_a = shared + model.tokens(8, 6)
    branch_b = shared + model.tokens(9, 6)  # same length as branch_a on purpose
    turn2_a = branch_a + model.tokens(10, 6)
    turn2_b = branch_b + model.tokens(11, 6)
    cmp = _Compare(model)
    for request in (branch_a, branch_b, turn2_a, turn2_b):
        _, start, rows = cache.prefill(request)
        cmp.add(request, start, rows)
    return cmp.result()


def prefix_sweep(model: TinyHybridModel, lengths, splits_per_length: int) -> CaseResult:
    """Long sequences, each resumed from several prefix lengths (one fresh cache per split)."""
    cmp = _Compare(model)
    for i, length in enumerate(lengths):
        tokens = model.tokens(100 + i, length)
        reference = model.score(tokens)
        for j in range(1, splits_per_length + 1):
            split = max(1, length * j // (splits_per_length + 1) + j)
            cache = PrefixCache(model)
            cache.prefill(tokens[:split])
            _, start, rows = cache.prefill(tokens)
            cmp.add(tokens, start, rows, reference)
    return cmp.result()


# Row label in the docstring table -> (case function, lazy cache)
TABLE_CASES = {
    "test_logprobs_match": (logprobs_match, False),
    "test_prefill_cache_hit": (prefill_cache_hit, False),
    "test_decode_cache_hit": (decode_cache_hit, False),
    "multiturn branching": (multiturn_branching, False),
    "lazy test_prefill_cache_hit": (prefill_cache_hit, True),
}


def run_case(label: str, model: TinyHybridModel, bugs: frozenset[str] | None = None) -> CaseResult:
    func, lazy = TABLE_CASES[label]
    return func(model, PrefixCache(model, lazy=lazy, bugs=bugs))
