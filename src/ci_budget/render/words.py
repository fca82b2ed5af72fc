"""Words, numbers and one-line summaries shared by the terminal text and the markdown, and the
verdict in words: the headline of both reports and the context line under it. Pure.

What these return is not escaped: data inside (GPU names, runner configs, table cells) is escaped
by the renderer for its medium (`escape.md`, `escape.plain`). Names in a verdict (files, suites,
guard cases) come from a PR: the caller passes the escaping for its medium (`code`/`md` for
markdown, `plain` for a terminal) and a short form for paths. A finding of at most `NAMES`
things names them; of more, it counts them (the tables below name them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ci_budget.budget.diff import Change
from ci_budget.budget.status import STATUS_ORDER
from ci_budget.budget.verdict import Finding, Verdict
from ci_budget.models import BudgetLine, Report, pct, secs

# ==== Words and one-line summaries ============================================================

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


def counts_line(report: Report) -> str:
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


# ==== The verdict in words ====================================================================

ICON = {"ok": "✅", "warn": "⚠️", "fail": "🛑"}
WORD = {"ok": "OK", "warn": "WARNING", "fail": "FAILING"}  # a terminal's marks
NAMES = 2
# kind: (noun, its plural, predicate) for findings that count files or errors
_COUNTED = {
    "timeout": ("file", "files", "timed out"),
    "failed": ("file", "files", "failed"),
    "over": ("file", "files", "over budget"),
    "flaky": ("file", "files", "passed only on a retry"),
    "registry-error": ("registry error", "registry errors", "introduced"),
    "below-p90": ("est_time", "est_times", "below the measured p90"),
    "unverified": ("guard row", "guard rows", "unverified on {arch}"),
    "silent": ("guard row", "guard rows", "silent on {arch}"),
}
_STAGE = {"stage-over": "over", "stage-near": "near"}


@dataclass
class Words:
    """How names are written: `name` a path or suite (code), `text` prose (a guard case),
    `short` a path's short form."""

    name: Callable[[str], str]
    text: Callable[[str], str]
    short: Callable[[str], str] = str


def arch_name(arch: str | None) -> str:
    return arch.upper() if arch else "the CI arch"  # sm90 -> SM90, as guard tables write it


def _names(f: Finding, w: Words) -> str:
    guard = f.kind in ("unverified", "silent")
    shown = [w.text(x) if guard else w.name(w.short(x)) for x in f.names[:NAMES]]
    if f.detail:
        shown = [f"{x}: {d}" for x, d in zip(shown, f.detail, strict=False)]
    return ", ".join(shown)


def _its(f: Finding) -> str:
    return "its" if f.count == 1 else "their"


def phrase(f: Finding, w: Words) -> str:
    """One finding in words, e.g. `2 files timed out (a.py, b.py)`."""
    if f.kind in _STAGE:
        names = ", ".join(w.name(x) for x in f.names[:NAMES])
        more = f" and {f.count - NAMES:,} more" if f.count > NAMES else ""
        detail = f" ({'; '.join(f.detail[:NAMES])})" if f.detail else ""
        return f"{names}{more} {_STAGE[f.kind]} {_its(f)} stage timeout{detail}"
    if f.kind == "nothing-ran":
        return f"nothing ran ({w.text(f.detail[0])})"
    if f.kind == "elsewhere":
        return "results of another " + "; another ".join(w.text(d) for d in f.detail)
    one, many, predicate = _COUNTED[f.kind]
    predicate = predicate.format(arch=w.text(arch_name(f.arch)))
    names = f" ({_names(f, w)})" if f.count <= NAMES else ""  # more: the tables name them
    return f"{f.count:,} {one if f.count == 1 else many} {predicate}{names}"


def headline(
    v: Verdict, w: Words, title: str, ok: str = "nothing to act on", mark: dict = ICON
) -> str:
    """`⚠️ title: a; b`: the verdict's mark, then its findings, worst first."""
    return f"{mark[v.level]} {title}: " + ("; ".join(phrase(f, w) for f in v.findings) or ok)


def context(v: Verdict, w: Words) -> str:
    """What is true but not this PR's doing, as one sentence ("" for nothing)."""
    parts = []
    for f in v.context:
        one = f.count == 1
        if f.kind in _STAGE:
            names = ", ".join(w.name(x) for x in f.names[:NAMES])
            more = f" and {f.count - NAMES:,} more" if f.count > NAMES else ""
            detail = f" ({'; '.join(f.detail[:NAMES])})" if f.detail else ""
            parts.append(
                f"{names}{more} {'was' if one else 'were'} already {_STAGE[f.kind]} {_its(f)} "
                f"stage timeout{detail} and {'is' if one else 'are'} not made worse"
            )
        elif f.kind in ("unverified", "silent"):
            rows = "guard row" if one else "guard rows"
            arch = w.text(arch_name(f.arch))
            names = f" ({_names(f, w)})" if f.count <= NAMES else ""
            parts.append(f"{f.count:,} {rows} already {f.kind} on {arch} at the base{names}")
    return ("Not this PR's doing: " + "; ".join(parts) + ".") if parts else ""


# ==== A PR's budget changes in words ==========================================================


def gpu_delta(gpu_seconds: float | None) -> str:
    """A change in GPU time per run, in GPU-seconds and GPU-minutes."""
    if gpu_seconds is None:
        return "?"
    return f"{gpu_seconds:+,.0f} GPU·s ({gpu_seconds / 60:+,.1f} GPU·min)"


def measured_words(c: Change, given: str, strong=str) -> str:
    """What the file measures (p90, runs, source) and the new est_time's headroom over it:
    `17% headroom over p90 655s (12 runs, ci-budget history)`, or how far below it the budget
    is. `given`: the report's `predicted_from` (what measured data there was); `strong`:
    how the verdict's number is emphasised."""
    if c.est_after is None:
        return ""
    if c.p90 is None or c.headroom is None:
        gaps = {"history": "no passing runs in the history", "model": "no entry in the model"}
        if given == "est_time":
            return "not measured (no --history or --partition-model given)"
        return "not measured: " + ", ".join(gaps[g] for g in given.split("+"))
    runs = f"{c.n:,} run{'s' if c.n != 1 else ''}, " if c.n else ""
    where = f"p90 {secs(c.p90)} ({runs}{c.measured_from})"
    if c.under_p90:
        return f"⚠️ {strong(pct(-c.headroom) + ' below')} {where}"
    return f"{strong(pct(c.headroom) + ' headroom')} over {where}"


def history_note(note) -> str:
    """A file's history in one line: its budget, measured p90, timeouts and failures."""
    st = note.stats
    parts = []
    if note.est_time is not None:
        parts.append(f"{secs(note.est_time)} budget")
    if st.n:
        parts.append(
            f"p90 measured {secs(st.p90)} over the last {st.n} passing run(s) "
            f"(p50 {secs(st.p50)}, max {secs(st.max)})"
        )
    if st.timeouts:
        parts.append(f"{st.timeouts} timeout(s), at least {secs(st.timeout_lower_bound)}")
    if st.failed:
        parts.append(f"{st.failed} failed")
    return ", ".join(parts) or "no passing runs"
