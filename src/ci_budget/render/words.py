"""Words, numbers and one-line summaries shared by the terminal text and the markdown. Pure.

What these return is not escaped: data inside (GPU names, runner configs, table cells) is escaped
by the renderer for its medium (`escape.md`, `escape.plain`).
"""

from __future__ import annotations

import math

from ci_budget.budget.status import STATUS_ORDER
from ci_budget.models import BudgetLine, Report
from ci_budget.units import secs

# status: (word in tables, emoji, word in the headline); the order is `STATUS_ORDER`.
_LOOK = {
    "timeout": ("timeout", "⏱️", "timed out"),
    "over": ("over", "🔴", "over budget"),
    "failed": ("failed", "❌", "failed"),
    "flaky": ("flaky", "🔁", "flaky"),
    "near": ("near", "🟡", "near"),
    "stale": ("stale", "💤", "stale"),
    "ok": ("ok", "✅", "ok"),
    "cancelled": ("cancelled", "⏹️", "cancelled"),
    "not-run": ("not run", "⚪", "not run"),
}
assert tuple(_LOOK) == STATUS_ORDER, "every status needs its words, in STATUS_ORDER"
STATUS_WORD = {s: look[0] for s, look in _LOOK.items()}
STATUS_EMOJI = {s: look[1] for s, look in _LOOK.items()}
HEADLINE_WORD = {s: look[2] for s, look in _LOOK.items()}


def budget(line: BudgetLine) -> str:
    """A file's est_time; `-` only where no registration gives one (a registered 0 is 0)."""
    return secs(line.est_time if line.line else line.est_time or None)


def bar(ratio: float | None, width: int = 10) -> str:
    if ratio is None:
        return "░" * width
    filled = min(width, max(0, math.floor(ratio * width + 0.5)))
    return "█" * filled + "░" * (width - filled)


def attempts_text(line: BudgetLine) -> str:
    """A retried file's attempts: `attempt 1 failed after 300s (AssertionError), attempt 2
    passed after 310s`; "" for one attempt."""
    if len(line.attempts) < 2:
        return ""
    words = []
    for i, a in enumerate(line.attempts, 1):
        why = f" ({a.reason})" if a.reason else ""
        words.append(f"attempt {i} {a.status} after {secs(a.elapsed)}{why}")
    return ", ".join(words)


def suggestion_text(line: BudgetLine) -> str:
    if line.suggestion is None:
        return ""
    if line.status == "timeout":
        return f"est_time>={line.suggestion}"
    return f"est_time={line.suggestion}"


def counts(report: Report) -> dict[str, int]:
    out = dict.fromkeys(STATUS_ORDER, 0)
    for line in report.lines:
        out[line.status] += 1
    return out


def headline(report: Report) -> str:
    c = counts(report)
    if not report.lines:
        return "no results"
    parts = [f"{c[s]:,} {HEADLINE_WORD[s]}" for s in STATUS_ORDER if c[s]]
    est = sum(t.est_total for t in report.suites)
    measured = sum(t.measured_total for t in report.suites)
    n = len(report.suites)
    return (
        f"{', '.join(parts)} — {secs(measured)} measured of {secs(est)} budgeted "
        f"in {n} suite{'s' if n != 1 else ''}"
    )


def _where(meta) -> str:
    bits = []
    if meta.gpu is not None:
        cc = (
            f", compute capability {meta.gpu.compute_capability}"
            if meta.gpu.compute_capability
            else ""
        )
        count = f"{meta.gpu.count}× " if meta.gpu.count > 1 else ""
        bits.append(f"{count}{meta.gpu.name} ({meta.gpu.arch or 'arch unknown'}{cc})")
    else:
        bits.append("no GPU detected")
    if meta.runner_config:
        configured = f", configured {meta.configured_arch}" if meta.configured_arch else ""
        bits.append(f"runner config {meta.runner_config}{configured}")
    if meta.partition:
        bits.append(f"shard {meta.partition}")
    if meta.commit:
        bits.append(f"commit {meta.commit[:10]}")
    return " · ".join(bits)


def run_places(report: Report) -> list[str]:
    """Where the runs ran: GPU (detected arch), runner config, shard, commit; distinct ones."""
    seen: dict[str, None] = {}
    for meta in report.meta:
        seen.setdefault(_where(meta))
    return list(seen)


def run_line(report: Report, limit: int = 6) -> str:
    seen = run_places(report)
    if not seen:
        return ""
    more = f"; and {len(seen) - limit} more" if len(seen) > limit else ""
    return "Ran on " + "; ".join(seen[:limit]) + more


def arch_cells(row) -> str:
    """What each architecture measured, e.g. `sm90: 1.23; sm100: n/a; fixed: 1.01`."""
    parts = [
        f"{arch}: {cell.raw or ('n/a' if cell.na else '')}" for arch, cell in row.reverted.items()
    ]
    if row.fixed is not None:
        parts.append(f"fixed: {row.fixed.raw or 'n/a'}")
    parts += [f"this run on {key}: {value:.3g}" for key, value in row.measured.items()]
    return "; ".join(parts)
