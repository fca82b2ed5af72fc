"""Markdown of the static budget report: the `budget` sticky comment. Pure.

GitHub rejects comments over 65,536 characters: long tables are cut with a note, so the
summary lines at the top always fit.
"""

from __future__ import annotations

from ci_budget.budget.diff import Change, StaticReport

MARKER = "<!-- ci-budget:budget -->"
LIMIT = 65_536
RISK_ICON = {"ok": "✅", "near": "⚠️", "over": "🛑"}


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:,.0f} s"


def _signed(seconds: float) -> str:
    return f"{seconds:+,.0f} s"


def _gpu(gpu_seconds: float | None) -> str:
    if gpu_seconds is None:
        return "?"
    return f"{gpu_seconds:+,.0f} GPU·s ({gpu_seconds / 60:+,.1f} GPU·min)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _what(c: Change) -> str:
    labels = {
        "est_time": "est_time",
        "moved": f"moved from `{c.suite_before}`",
        "disabled": f"disabled ({c.disabled_after})",
        "enabled": "enabled",
        "added": "new registration",
        "new-file": "new file",
        "removed": "registration removed",
        "file-removed": "file removed",
        "unregistered": "lost its registration (file still there)",
    }
    return ", ".join(labels[k] for k in c.kinds)


def _est(c: Change) -> str:
    if c.est_before is not None and c.est_after is not None:
        pct = f" ({c.delta_ratio * 100:+.0f} %)" if c.delta_ratio is not None else ""
        if c.est_before == c.est_after:
            return _s(c.est_after)
        return f"{_s(c.est_before)} → {_s(c.est_after)}: **{_signed(c.delta)}**{pct}"
    if c.est_after is not None:
        return f"{_s(c.est_after)} (**{_signed(c.delta)}**)"
    return f"{_s(c.est_before)} (**{_signed(c.delta)}**)"


def _history_text(note) -> str:
    st = note.stats
    parts = []
    if note.est_time is not None:
        parts.append(f"{note.est_time:,.0f} s budget")
    if st.n:
        parts.append(
            f"p90 measured {st.p90:,.0f} s over the last {st.n} passing run(s) "
            f"(p50 {st.p50:,.0f} s, max {st.max:,.0f} s)"
        )
    if st.timeouts:
        parts.append(f"{st.timeouts} timeout(s), at least {st.timeout_lower_bound:,.0f} s")
    if st.failed:
        parts.append(f"{st.failed} failed")
    return ", ".join(parts) or "no passing runs"


def _section(title: str, header: str, rows: list[str], room: int) -> list[str]:
    """A table that stops, with a note, before taking more than `room` characters."""
    out = [f"\n### {title}\n", header]
    used = sum(len(x) + 1 for x in out)
    for i, row in enumerate(rows):
        if used + len(row) + 1 > room:
            out.append(f"\n_…{len(rows) - i} more row(s) not shown (comment size limit)._")
            break
        out.append(row)
        used += len(row) + 1
    return out


def markdown(report: StaticReport, limit: int = LIMIT) -> str:
    base = report.base_commit[:12] or report.base_ref
    head = [
        MARKER,
        f"## {RISK_ICON.get(report.risk, '')} ci-budget: est_time changes vs `{base}`",
        "",
    ]
    if not report.changes and not report.errors_introduced:
        head.append("No registration changes against the base.")
    else:
        head.append(
            f"**{len(report.changes)}** registration change(s); budget "
            f"**{_signed(report.est_delta)}** per run; GPU cost {_gpu(report.gpu_seconds_delta)} "
            f"per run; stage timeout risk: **{report.risk}**."
        )
    for note in report.notes:
        head.append(f"\n_{note}_")
    body: list[str] = []
    room = limit - sum(len(x) + 1 for x in head) - 200
    blocks = []
    if report.errors_introduced:
        rows = [
            f"| `{_cell(p.file)}:{p.line}` | {_cell(p.message)} |" for p in report.errors_introduced
        ]
        blocks.append(("Registry errors introduced", "| where | error |\n|---|---|", rows))
    if report.suites:
        rows = []
        for s in report.suites:
            shards = (
                f"{s.shards_before} → {s.shards_after}"
                if s.shards_before != s.shards_after
                else str(s.shards_after)
            )
            gpus = "?" if s.gpus is None else str(s.gpus)
            runners = "?" if s.gpus is None else f"{s.shards_after} × {gpus} GPU"
            rows.append(
                f"| `{_cell(s.suite)}` | {s.files_before} → {s.files_after} | "
                f"{_s(s.est_before)} → {_s(s.est_after)} ({_signed(s.delta)}) | {shards} | "
                f"{_s(s.makespan_before)} → {_s(s.makespan_after)} of {s.timeout_s / 60:g} min "
                f"({s.makespan_after / s.timeout_s * 100:.0f} %) | "
                f"{RISK_ICON[s.risk]} {s.risk} | {runners} | {_gpu(s.gpu_seconds_delta)} |"
            )
        blocks.append(
            (
                "Suites",
                "| suite | files | Σ est_time | shards | predicted makespan vs stage timeout "
                "| risk | GPU runners | GPU cost / run |\n|---|---|---|---|---|---|---|---|",
                rows,
            )
        )
    if report.changes:
        rows = [
            f"| `{_cell(c.file)}:{c.line}` | `{_cell(c.suite_after or c.suite_before or '')}` "
            f"| {_cell(_what(c))} | {_est(c)} | {_gpu(c.gpu_seconds_delta)} |"
            for c in report.changes
        ]
        blocks.append(
            (
                "Changed registrations",
                "| file | suite | change | est_time | GPU cost / run |\n|---|---|---|---|---|",
                rows,
            )
        )
    if report.history:
        rows = [
            f"| `{_cell(n.file)}` | `{_cell(n.suite)}` | {_cell(_history_text(n))} |"
            for n in report.history
        ]
        blocks.append(("Measured history", "| file | suite | measured |\n|---|---|---|", rows))
    if report.arch_rows or report.arch_problems:
        rows = [
            f"| `{_cell(r.file)}:{r.line}` | {_cell(r.case)} | {_cell(', '.join(r.flags))} |"
            for r in report.arch_rows
        ] + [
            f"| `{_cell(p.file)}:{p.line}` | (table) | {_cell(p.message)} |"
            for p in report.arch_problems
        ]
        blocks.append(("Architecture table flags", "| row | case | flags |\n|---|---|---|", rows))
    for title, header, rows in blocks:
        section = _section(title, header, rows, room)
        room -= sum(len(x) + 1 for x in section)
        body.extend(section)
    body.append(
        f"\n<sub>Planner `{report.algorithm}` on est_time; makespan = the longest shard. "
        "GPU cost = Δ est_time × the runner config's GPUs.</sub>"
    )
    text = "\n".join(head + body) + "\n"
    if len(text) > limit:  # tiny limits only: the sections already kept within room
        text = text[: limit - 60] + "\n\n_(cut at the comment size limit)_\n"
    return text
