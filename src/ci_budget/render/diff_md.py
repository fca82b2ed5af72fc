"""Markdown of the static budget report: the `budget` sticky comment. Pure.

GitHub rejects comments over 65,536 characters: long tables are cut by `blocks` with a note, the
last one first, so the summary lines at the top always fit. Paths, suite names, reasons and
table cells come from the PR's files and go through `escape`.
"""

from __future__ import annotations

from ci_budget.budget.diff import Change, StaticReport
from ci_budget.budget.impact import SuiteImpact, pr_risk
from ci_budget.budget.verdict import below_p90, static_verdict
from ci_budget.models import pct, secs
from ci_budget.render import mermaid
from ci_budget.render.blocks import (
    COMMENT_LIMIT,
    Part,
    file_cell,
    fit_parts,
    join,
    marker_for,
    md_head,
    md_row,
    short_names,
)
from ci_budget.render.escape import code, md
from ci_budget.render.run_md import FOLD_END, fold
from ci_budget.render.words import Words, context, gpu_delta, headline, history_note, measured_words

MARKER = marker_for("budget")
LIMIT = COMMENT_LIMIT
RISK_ICON = {"ok": "✅", "near": "⚠️", "over": "🛑"}
MAX_PICTURES = 3


def _what(c: Change) -> str:
    labels = {
        "est_time": "est_time",
        "moved": f"moved from {code(c.suite_before or '')}",
        "disabled": f"disabled ({md(c.disabled_after or '')})",
        "enabled": "enabled",
        "added": "new registration",
        "new-file": "new file",
        "removed": "registration removed",
        "file-removed": "file removed",
        "unregistered": "lost its registration (file still there)",
    }
    return ", ".join(labels[k] for k in c.kinds)


def bold(text: str) -> str:
    return f"**{text}**"


def _est_change(c: Change) -> str:
    if c.est_before is not None and c.est_after is not None:
        ratio = f" ({pct(c.delta_ratio, '+')})" if c.delta_ratio is not None else ""
        if c.est_before == c.est_after:
            return secs(c.est_after)
        return f"{secs(c.est_before)} → {secs(c.est_after)}: **{secs(c.delta, '+')}**{ratio}"
    if c.est_after is not None:
        return f"{secs(c.est_after)} (**{secs(c.delta, '+')}**)"
    return f"{secs(c.est_before)} (**{secs(c.delta, '+')}**)"


def _where(file: str, line: int) -> str:
    return code(f"{file}:{line}" if line else file)


def _part(title: str, columns: list[str], rows: list[str]) -> Part:
    return Part(f"\n### {title}\n\n", md_head(columns), rows, priority=1, noun="more row(s)")


def _risk_cell(s) -> str:
    """The suite's risk after the PR; one the PR did not cause (or worsen) says so."""
    if pr_risk(s) == s.risk:
        return f"{RISK_ICON[s.risk]} {s.risk}"
    return f"ℹ️ {s.risk}, not made worse"


def _suite_row(s) -> str:
    shards = (
        f"{s.shards_before} → {s.shards_after}"
        if s.shards_before != s.shards_after
        else str(s.shards_after)
    )
    runners = "?" if s.gpus is None else f"{s.shards_after} × {s.gpus} GPU"
    makespan = (
        f"{secs(s.makespan_before)} → {secs(s.makespan_after)} of {s.timeout_s / 60:g} min "
        f"({pct(s.makespan_after / s.timeout_s)})"
    )
    return md_row(
        [_risk_cell(s), makespan]
        + [f"{secs(s.est_before)} → {secs(s.est_after)} ({secs(s.delta, '+')})", shards]
        + [
            gpu_delta(s.gpu_seconds_delta),
            runners,
            f"{s.files_before} → {s.files_after}",
            code(s.suite),
        ]
    )


def _parts(report: StaticReport, blob: str | None = None) -> list[Part]:
    """Verdict first: risk, change and flag columns lead; file and suite names come last."""
    files = [c.file for c in report.changes] + [n.file for n in report.history]
    files += [r.file for r in report.arch_rows] + [p.file for p in report.arch_problems]
    short = short_names(files + [p.file for p in report.errors_introduced])

    def where(file: str, line: int) -> str:
        return file_cell(file, line, short[file], blob) if blob else _where(short[file], line)

    parts = []
    if report.errors_introduced:
        rows = [md_row([md(p.message), where(p.file, p.line)]) for p in report.errors_introduced]
        parts.append(_part("Registry errors introduced", ["error", "where"], rows))
    if report.suites:
        columns = ["risk", "predicted makespan vs stage timeout", "Σ est_time", "shards"]
        columns += ["GPU cost / run", "GPU runners", "files", "suite"]
        parts.append(_part("Suites", columns, [_suite_row(s) for s in report.suites]))
    if report.changes:
        rows = [
            md_row(
                [_est_change(c), measured_words(c, report.predicted_from, bold), _what(c)]
                + [gpu_delta(c.gpu_seconds_delta), where(c.file, c.line)]
                + [code(c.suite_after or c.suite_before or "")]
            )
            for c in report.changes
        ]
        columns = ["est_time change", "measured, headroom", "what", "GPU cost / run", "file"]
        columns.append("suite")
        parts.append(_part("Changed registrations", columns, rows))
    if report.history:
        rows = [md_row([history_note(n), where(n.file, 0), code(n.suite)]) for n in report.history]
        parts.append(_part("Measured history", ["measured", "file", "suite"], rows))
    if report.arch_rows or report.arch_problems:
        rows = [
            md_row([md(", ".join(r.flags)), md(r.case), where(r.file, r.line)])
            for r in report.arch_rows
        ] + [
            md_row([md(p.message), "(table)", where(p.file, p.line)]) for p in report.arch_problems
        ]
        parts.append(_part("Architecture table flags", ["flags", "case", "row"], rows))
    return parts


def _top(report: StaticReport) -> str:
    """The verdict (what this PR must act on, worst first), then what changed against the
    base, then what is true but not this PR's doing."""
    base = report.base_commit[:12] or report.base_ref
    v = static_verdict(report)
    short = short_names(verdict_names(v))
    w = Words(name=code, text=md, short=lambda path: short.get(path, path))
    head = [MARKER, f"## {headline(v, w, 'ci-budget')}", ""]
    if not report.changes and not report.errors_introduced:
        head.append(f"No registration changes against {code(base)}.")
    else:
        head.append(
            f"est_time changes vs {code(base)}: **{len(report.changes)}** registration "
            f"change(s); budget **{secs(report.est_delta, '+')}** per run; GPU cost "
            f"{gpu_delta(report.gpu_seconds_delta)} per run."
        )
    told = context(v, w)
    if told:
        head.append(f"\n_{told}_")
    for note in report.notes:
        head.append(f"\n_{md(note)}_")
    return "\n".join(head) + "\n"


def verdict_names(v) -> list[str]:
    """The file paths a verdict names (for their short names)."""
    files = ("timeout", "failed", "over", "below-p90", "registry-error")
    return [n for f in [*v.findings, *v.context] if f.kind in files for n in f.names]


def pictures(report: StaticReport) -> tuple[list[str], list[str]]:
    """(Gantts, history charts), at most `MAX_PICTURES` in all: those about the verdict first
    (a suite this PR puts at risk, a file whose new est_time is below its p90), then the rest
    of the suites whose shards change materially, then the other history charts."""
    suites = sorted(
        (s for s in report.suites if mermaid.material(s)),
        key=lambda s: -s.makespan_after / s.timeout_s,
    )
    notes = [n for n in report.history if n.trend]
    first = [s for s in suites if pr_risk(s) != "ok"] + [n for n in notes if below_p90(n)]
    rest = [s for s in suites if pr_risk(s) == "ok"] + [n for n in notes if not below_p90(n)]
    gantts: list[str] = []
    charts: list[str] = []
    for item in first + rest:
        if len(gantts) + len(charts) == MAX_PICTURES:
            break
        if isinstance(item, SuiteImpact):
            if gantt := mermaid.shard_gantt(item):
                gantts.append(gantt)
        elif chart := mermaid.trend_chart(item.file, item.trend, item.est_time):
            charts.append(chart)
    return gantts, charts


def _drawn(gantts: list[str], charts: list[str]) -> list[Part]:
    """One picture in view, the first (the one about the verdict); the others folded."""
    titled = [("Predicted shards of the suites this PR changes materially", g) for g in gantts]
    titled += [("Measured history vs est_time", c) for c in charts]
    if not titled:
        return []
    (title, first), rest = titled[0], titled[1:]
    parts = [mermaid.part(title, first)]
    if rest:
        items = [f"\n**{name}**\n\n{picture}" for name, picture in rest]
        summary = f"{len(rest)} more picture{'s' if len(rest) > 1 else ''}"
        parts.append(Part(fold(summary), "", items, priority=mermaid.PRIORITY,
                          noun="picture(s)", close=FOLD_END))  # fmt: skip
    return parts


def _numbers(report: StaticReport) -> str:
    """What shards are split on, and what their walls are predicted from."""
    if report.predicted_from == "est_time":
        return "est_time"
    words = {"model": "the partition model's est", "history": "the measured p90"}
    split = ", else ".join(words[p] for p in report.predicted_from.split("+")) + ", else est_time"
    if "history" not in report.predicted_from:
        return split + "; shard wall = coeff × Σ + bias"
    model = "the model's est, else " if "model" in report.predicted_from else ""
    return (
        f"{split}; shard wall = Σ each file's recent measured time (2+ passing runs), else "
        f"{model}est_time, + the suite's job overhead"
        + (", averaged with coeff × Σ + bias" if model else "")
    )


def markdown(report: StaticReport, limit: int = LIMIT, blob: str | None = None) -> str:
    """`blob`: `https://github.com/OWNER/REPO/blob/SHA` of the PR's commit, for file links."""
    top = _top(report)
    foot = Part(
        "",
        "",
        [
            f"\n<sub>Planner {code(report.algorithm)} on {_numbers(report)}; makespan = the "
            "longest shard. GPU cost = Δ est_time × the runner config's GPUs.</sub>\n"
        ],
    )
    parts = [*_parts(report, blob), *_drawn(*pictures(report)), foot]
    fit_parts(top, parts, limit)
    return join(top, parts, limit)
