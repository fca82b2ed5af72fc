"""A tiny hybrid model: one attention layer over past keys/values plus a linear recurrent state.

Every token goes through `step`, in the uncached path and in the cached path alike, so both do
identical float operations on identical inputs in identical order. A cache only skips steps by
restoring the state a previous request left behind; it never changes how a step is computed.
That is what makes an exact comparison (KL == 0.0) meaningful.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bitexact_model.backend import Backend, get_backend


@dataclass
class State:
    """Everything a sequence carries forward: recurrent state, KV buffers, length."""

    h: object  # recurrent state, (dim,)
    keys: object  # (capacity, dim); rows [0, n) are valid
    values: object
    n: int = 0
    # Recurrent state as of the last prefill checkpoint (tile boundary, or every decode step).
    h_ckpt: object = None
    ckpt_n: int = 0


class TinyHybridModel:
    def __init__(
        self,
        seed: int = 0,
        vocab: int = 96,
        dim: int = 48,
        capacity: int = 640,
        backend: Backend | None = None,
    ):
        self.backend = backend or get_backend()
        self.vocab, self.dim, self.capacity = vocab, dim, capacity
        self.tile = self.backend.scan_tile()
        rng = np.random.default_rng(seed)
        b = self.backend
        scale = 1.0 / np.sqrt(dim)
        self.embed = b.asarray(rng.standard_normal((vocab, dim)))
        self.w_in = b.asarray(rng.standard_normal((dim, dim)) * scale * 0.05)
        self.decay = b.asarray(rng.uniform(0.80, 0.99, dim))
        self.wq = b.asarray(rng.standard_normal((dim, dim)) * scale)
        self.wk = b.asarray(rng.standard_normal((dim, dim)) * scale)
        self.wv = b.asarray(rng.standard_normal((dim, dim)) * scale)
        self.wo = b.asarray(rng.standard_normal((vocab, dim)) * scale * 2.0)
        self.attn_scale = b.asarray(np.array(scale))

    def new_state(self) -> State:
        b = self.backend
        zeros = b.zeros((self.dim,))
        return State(
            h=zeros,
            keys=b.zeros((self.capacity, self.dim)),
            values=b.zeros((self.capacity, self.dim)),
            h_ckpt=b.copy(zeros),
        )

    def recur(self, h, token: int):
        """The recurrent update alone; `step` uses exactly this expression."""
        return self.decay * h + self.backend.tanh(self.w_in @ self.embed[token])

    def step(self, state: State, token: int, decode: bool = False):
        """Consume one token; return log-probabilities of the next token, (vocab,)."""
        if state.n >= self.capacity:
            raise ValueError(f"sequence longer than the model's capacity {self.capacity}")
        b = self.backend
        x = self.embed[token]
        state.h = self.recur(state.h, token)
        state.keys[state.n] = self.wk @ x
        state.values[state.n] = self.wv @ x
        state.n += 1
        # Prefill checkpoints the recurrent state once per scan tile; decode on every token.
        if decode or state.n % self.tile == 0:
            state.h_ckpt, state.ckpt_n = state.h, state.n
        q = self.wq @ (x + state.h)
        scores = (state.keys[: state.n] @ q) * self.attn_scale
        weights = b.exp(scores - b.amax(scores))
        weights = weights / b.total(weights)
        ctx = weights @ state.values[: state.n]
        logits = self.wo @ (x + state.h + ctx)
        z = logits - b.amax(logits)
        return z - b.log(b.total(b.exp(z)))

    def score(self, tokens) -> np.ndarray:
        """Uncached reference: log-probabilities after every position, (len, vocab) float64."""
        state = self.new_state()
        rows = [self.step(state, int(t)) for t in tokens]
        return self.backend.to_numpy(rows)

    def greedy(self, state: State, last_logprobs, steps: int) -> tuple[list[int], list]:
        """Decode `steps` tokens greedily from `state`; returns tokens and their step outputs."""
        tokens, rows = [], []
        lp = last_logprobs
        for _ in range(steps):
            token = self.backend.argmax(lp)
            lp = self.step(state, token, decode=True)
            tokens.append(token)
            rows.append(lp)
        return tokens, rows

    def tokens(self, seed: int, length: int) -> list[int]:
        """A deterministic token sequence for tests."""
        rng = np.random.default_rng(10_000 + seed)
        return [int(t) for t in rng.integers(0, self.vocab, length)]
