"""A prefix cache for the hybrid model: saves (recurrent state, KV) at prefix ends, restores them.

Two historical bugs can be switched back on with `BITEXACT_REINTRODUCE_BUG` (comma separated ids):

- 34184: a saved prefix gets the recurrent state of the last prefill checkpoint (a scan-tile
  boundary) instead of the state at the prefix end. Stale only when the prefix length is not a
  multiple of the backend's scan tile, and never after decode (decode checkpoints every token).
- 29792: slots are keyed by prefix length, so after a branch the second sibling of the same
  length overwrites the first one's slot and the first branch later resumes from the wrong state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from bitexact_model.model import State, TinyHybridModel

STALE_CHECKPOINT = "34184"
SLOT_BY_DEPTH = "29792"
KNOWN_BUGS = {STALE_CHECKPOINT: "stale recurrent checkpoint", SLOT_BY_DEPTH: "slot keyed by depth"}
BUG_ENV = "BITEXACT_REINTRODUCE_BUG"


def active_bugs(value: str | None = None) -> frozenset[str]:
    raw = os.environ.get(BUG_ENV, "") if value is None else value
    ids = {part.strip().lstrip("#") for part in raw.replace(" ", ",").split(",") if part.strip()}
    unknown = sorted(ids - KNOWN_BUGS.keys())
    if unknown:
        known = ", ".join(sorted(KNOWN_BUGS))
        raise ValueError(f"{BUG_ENV}={raw!r}: unknown bug id {', '.join(unknown)} (known: {known})")
    return frozenset(ids)


@dataclass
class Snapshot:
    h: object
    keys: object
    values: object
    n: int
    tokens: tuple[int, ...]
    # Lazy caches keep the last checkpoint and rebuild `h` on first use.
    h_ckpt: object = None
    ckpt_n: int = 0
    pending: bool = False


class PrefixCache:
    def __init__(
        self,
        model: TinyHybridModel,
        chunk: int = 13,
        lazy: bool = False,
        bugs: frozenset[str] | None = None,
    ):
        self.model = model
        self.chunk = chunk  # chunked prefill saves a snapshot every `chunk` tokens
        self.lazy = lazy
        self.bugs = active_bugs() if bugs is None else bugs
        self.index: dict[tuple[int, ...], int] = {}
        self.slots: dict[int, Snapshot] = {}
        self._next_slot = 0
        self.hits = 0

    # The two fixes. Each method's body is the fix; `fixes/<id>.patch` holds it as a diff, so
    # `ci-budget guard verify ... --revert fixes/<id>.patch` can take it out for real.
    def _stale_checkpoint(self) -> bool:
        # fix #34184: save the state at the prefix end, not the last scan-tile checkpoint
        return STALE_CHECKPOINT in self.bugs

    def _slot_by_depth(self) -> bool:
        # fix #29792: key slots by the prefix itself, so siblings of one length keep theirs
        return SLOT_BY_DEPTH in self.bugs

    def _slot_for(self, prefix: tuple[int, ...]) -> int:
        if self._slot_by_depth():
            return len(prefix)
        slot = self.index.get(prefix)
        if slot is None:
            slot, self._next_slot = self._next_slot, self._next_slot + 1
        return slot

    def save(self, state: State, tokens) -> None:
        b = self.model.backend
        prefix = tuple(int(t) for t in tokens[: state.n])
        snap = Snapshot(
            h=state.h,
            keys=b.copy(state.keys),
            values=b.copy(state.values),
            n=state.n,
            tokens=prefix,
        )
        if self.lazy:
            snap.h, snap.h_ckpt, snap.ckpt_n, snap.pending = None, state.h_ckpt, state.ckpt_n, True
        elif self._stale_checkpoint():
            snap.h = state.h_ckpt
        slot = self._slot_for(prefix)
        self.index[prefix] = slot
        self.slots[slot] = snap

    def _materialize(self, snap: Snapshot) -> None:
        h = snap.h_ckpt
        if not self._stale_checkpoint():
            # Replay the recurrence from the checkpoint: the same expression `step` uses.
            for token in snap.tokens[snap.ckpt_n : snap.n]:
                h = self.model.recur(h, token)
        snap.h, snap.pending = h, False

    def match(self, tokens) -> tuple[State, int]:
        """A state restored from the longest saved proper prefix of `tokens`, and its length."""
        key = tuple(int(t) for t in tokens)
        lengths = sorted({len(p) for p in self.index if len(p) < len(key)}, reverse=True)
        for n in lengths:
            slot = self.index.get(key[:n])
            if slot is None:
                continue
            snap = self.slots[slot]
            if snap.pending:
                self._materialize(snap)
            b = self.model.backend
            h = b.copy(snap.h)
            self.hits += 1
            restored = State(h=h, keys=b.copy(snap.keys), values=b.copy(snap.values), n=snap.n)
            restored.h_ckpt, restored.ckpt_n = h, snap.n
            return restored, n
        return self.model.new_state(), 0

    def prefill(self, tokens) -> tuple[State, int, list]:
        """Run a request: restore the longest prefix, step the rest, save snapshots."""
        state, start = self.match(tokens)
        rows = []
        for token in tokens[start:]:
            rows.append(self.model.step(state, int(token)))
            if state.n % self.chunk == 0 and state.n < len(tokens):
                self.save(state, tokens)
        self.save(state, tokens)
        return state, start, rows

    def decode(self, state: State, tokens, last_logprobs, steps: int) -> tuple[list[int], list]:
        """Greedy decode after a prefill of `tokens`, then save the whole sequence."""
        generated, rows = self.model.greedy(state, last_logprobs, steps)
        self.save(state, list(tokens) + generated)
        return generated, rows
