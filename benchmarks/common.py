"""Shared bits: timing several runs, peak memory, and the printed table."""

from __future__ import annotations

import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Timing:
    seconds: float  # best of the runs (least disturbed by the machine)
    median: float
    value: object


def best_of(repeat: int, fn: Callable[[], object]) -> Timing:
    times, value = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return Timing(min(times), statistics.median(times), value)


def peak_rss_mb() -> float:
    """Peak resident memory of this process and its finished children, in MB."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 1e6
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 1e6
    return max(own, kids)


@dataclass
class Row:
    name: str
    baseline: float | None  # seconds (or the unit in `unit`)
    ours: float | None
    peak_mb: float | None = None
    note: str = ""
    target: float | None = None  # ratio baseline/ours to reach (higher is better)
    ok: bool = True  # correctness check of this row
    unit: str = "s"
    limit: float | None = None  # absolute ceiling for `ours`, when the target is one

    @property
    def ratio(self) -> float | None:
        if not self.baseline or not self.ours:
            return None
        return self.baseline / self.ours

    @property
    def verdict(self) -> str:
        if not self.ok:
            return "WRONG"
        if self.limit is not None and self.ours is not None:
            return "met" if self.ours <= self.limit else "missed"
        if self.target is None or self.ratio is None:
            return "-"
        return "met" if self.ratio >= self.target else "missed"


def table(rows: list[Row]) -> str:
    head = (
        f"{'benchmark':<52} {'baseline':>10} {'ci-budget':>10} {'ratio':>8} {'peak MB':>8}  target"
    )
    lines = [head, "-" * len(head)]
    notes = []
    for r in rows:
        digits = 0 if r.unit == " calls" else 3
        base = f"{r.baseline:.{digits}f}{r.unit}" if r.baseline is not None else "-"
        ours = f"{r.ours:.{digits}f}{r.unit}" if r.ours is not None else "-"
        ratio = f"{r.ratio:.1f}x" if r.ratio is not None else "-"
        mem = f"{r.peak_mb:.0f}" if r.peak_mb is not None else "-"
        if r.limit is not None:
            target = f"<= {r.limit:g}{r.unit}: {r.verdict}"
        elif r.target is not None:
            target = f">= {r.target:g}x: {r.verdict}"
        else:
            target = r.verdict
        lines.append(f"{r.name:<52} {base:>10} {ours:>10} {ratio:>8} {mem:>8}  {target}")
        if r.note:
            notes.append(f"  {r.name}: {r.note}")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"
