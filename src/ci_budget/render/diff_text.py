"""The static budget report for a terminal (`diff --base REF --format text`). Pure.

Verdict first: each table leads with what the reader decides on (risk, change), the names last.
Text from the PR's files is made single-line by the table formatter (`escape.plain`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ci_budget.budget.diff import Change, StaticReport
from ci_budget.budget.impact import SuiteImpact, pr_risk
from ci_budget.budget.verdict import static_verdict
from ci_budget.render.diff_md import _gpu, _history_text, measured_words
from ci_budget.render.escape import plain
from ci_budget.render.table import aligned
from ci_budget.render.verdict import WORD, Words, context, headline
from ci_budget.units import pct, secs

_WHAT = {
    "est_time": "est_time",
    "moved": "moved",
    "disabled": "disabled",
    "enabled": "enabled",
    "added": "new registration",
    "new-file": "new file",
    "removed": "registration removed",
    "file-removed": "file removed",
    "unregistered": "lost its registration",
}


def _change(c: Change) -> str:
    if c.est_before is not None and c.est_after is not None and c.est_before != c.est_after:
        ratio = f" ({pct(c.delta_ratio, '+')})" if c.delta_ratio is not None else ""
        return f"{secs(c.est_before)} → {secs(c.est_after)}, {secs(c.delta, '+')}{ratio}"
    if c.est_before is None or c.est_after is None:
        return f"{secs(c.est_after if c.est_after is not None else c.est_before)}, {secs(c.delta, '+')}"
    return secs(c.est_after)


def _what(c: Change) -> str:
    words = [_WHAT.get(k, k) for k in c.kinds]
    if "moved" in c.kinds and c.suite_before:
        words[c.kinds.index("moved")] = f"moved from {c.suite_before}"
    return ", ".join(words)


def _suite(s: SuiteImpact) -> list[str]:
    shards = f"{s.shards_before} → {s.shards_after}"
    used = pct(s.makespan_after / s.timeout_s) if s.timeout_s else "-"
    makespan = f"{secs(s.makespan_before)} → {secs(s.makespan_after)} of {s.timeout_s / 60:g} min"
    est = f"{secs(s.est_before)} → {secs(s.est_after)}"
    risk = s.risk if pr_risk(s) == s.risk else f"{s.risk}, not made worse"
    return [risk, used, makespan, est, shards, _gpu(s.gpu_seconds_delta), s.suite]


def terminal(report: StaticReport) -> str:
    base = report.base_commit[:12] or report.base_ref
    v = static_verdict(report)
    w = Words(name=plain, text=plain)
    out = [headline(v, w, "ci-budget (budget)", mark=WORD)]
    if not report.changes and not report.errors_introduced:
        out.append(f"No registration changes against {plain(base)}.")
    else:
        out.append(
            f"est_time changes vs {plain(base)}: {len(report.changes)} registration change(s); "
            f"budget {secs(report.est_delta, '+')} per run; GPU cost "
            f"{_gpu(report.gpu_seconds_delta)} per run"
        )
    if told := context(v, w):
        out.append(told)
    out += [f"note: {plain(n)}" for n in report.notes]
    if report.errors_introduced:
        rows: list[Sequence[object]]
        rows = [(f"{p.file}:{p.line}", p.message) for p in report.errors_introduced]
        out += [
            "",
            "Registry errors introduced:",
            *aligned([("WHERE", "ERROR"), *rows], indent="  "),
        ]
    if report.suites:
        head = ("RISK", "USED", "MAKESPAN vs TIMEOUT", "Σ EST_TIME", "SHARDS", "GPU COST", "SUITE")
        rows = [head, *(_suite(s) for s in report.suites)]
        out += ["", *aligned(rows, right={1})]
        walls = [(", ".join(secs(w) for w in s.loads_after), s.suite) for s in report.suites]
        out += [
            "",
            f"Predicted wall per shard (shard 0 first; from {report.predicted_from}):",
            *aligned([("WALLS", "SUITE"), *walls], indent="  "),
        ]
    if report.changes:
        rows = [
            (_change(c), measured_words(c, report.predicted_from), _what(c))
            + (c.suite_after or c.suite_before or "", f"{c.file}:{c.line}")
            for c in report.changes
        ]
        out += ["", *aligned([("CHANGE", "MEASURED, HEADROOM", "WHAT", "SUITE", "FILE"), *rows])]
    if report.history:
        rows = [(_history_text(n), n.suite, n.file) for n in report.history]
        out += [
            "",
            "Measured history:",
            *aligned([("MEASURED", "SUITE", "FILE"), *rows], indent="  "),
        ]
    if report.arch_rows or report.arch_problems:
        rows = [(", ".join(r.flags), r.case, f"{r.file}:{r.line}") for r in report.arch_rows]
        rows += [(p.message, "(table)", f"{p.file}:{p.line}") for p in report.arch_problems]
        out += [
            "",
            "Architecture table flags:",
            *aligned([("FLAGS", "CASE", "ROW"), *rows], indent="  "),
        ]
    return "\n".join(out) + "\n"
