"""The run report as GitHub markdown that always fits a limit (65,536 characters for a comment).

Parts are cut by `fit` in a fixed order (per-class detail of passing files first, ok rows next,
...). Over, timeout and failed lines are never cut; if even they do not fit they switch to one
line per file. Every string from results goes through `escape`. Linear in the number of files.
"""

from __future__ import annotations

from ci_budget.budget.status import ATTENTION, STATUS_ORDER
from ci_budget.models import BudgetLine, Report
from ci_budget.render import mermaid
from ci_budget.render.escape import block_line, code, fence_for, html, md
from ci_budget.render.fit import COMMENT_LIMIT, NEVER, Part, fit_parts, join, rendered_until
from ci_budget.render.paths import file_cell, short_names
from ci_budget.render.sticky import marker_for
from ci_budget.render.table import md_head, md_row
from ci_budget.render.words import (
    STATUS_EMOJI,
    STATUS_WORD,
    arch_cells,
    bar,
    headline,
    pct,
    run_line,
    secs,
    suggestion_text,
)

# Keyed by a group's first status: heading, rows priority, details priority, noun for the note.
GROUP_LOOK = {
    ATTENTION[0]: ("🔴 Over budget, timed out or failed", NEVER, 8, "files"),
    "near": ("🟡 Near budget", 7, 5, "near files"),
    "stale": ("💤 Budget far above measured time", 6, 1, "stale files"),
    "ok": ("✅ Within budget", 3, 1, "ok files"),
    "cancelled": ("⏹️ Cancelled", 4, 1, "cancelled files"),
    "not-run": ("⚪ Not run", 4, 1, "not-run files"),
}
# The attention statuses share one table; every other status has its own, in STATUS_ORDER.
GROUPS = [ATTENTION] + [(s,) for s in STATUS_ORDER if s not in ATTENTION]
# Verdict first: at GitHub's ~1,000 px the columns a reader decides on come before the names.
FILE_HEAD = md_head(
    ["Status", "Used", "Measured", "Budget", "Suggestion", "File", "Suite"], right={2, 3}
)
CLASS_HEAD = md_head(
    ["Class", "Class setup", "Tests", "Class teardown", "Total", "Share"], right={1, 2, 3, 4, 5}
)
SUITE_HEAD = md_head(
    ["Suite", "Files", "Measured", "Budget", "Used", "Over", "Near", "Timeouts", "Failed"]
    + ["GPU-seconds"],
    right=range(1, 10),
)
ARCH_HEAD = md_head(["Flags", "Case", "Fix", "Measured per arch", "Row"])


def path(line: BudgetLine) -> str:
    """A registered file as code; a path only results name (no registration) as escaped text."""
    return code(line.file) if line.line else md(line.file)


def file_row(line: BudgetLine, short: dict[str, str] | None = None, blob: str | None = None) -> str:
    status = f"{STATUS_EMOJI[line.status]} {STATUS_WORD[line.status]}"
    used = f"`{bar(line.ratio)}` {pct(line.ratio)}" if line.ratio is not None else "-"
    est = secs(line.est_time or None)
    name = (short or {}).get(line.file)
    where = file_cell(line.file, line.line, name, blob) if name and line.line else path(line)
    cells = [status, used, secs(line.measured), est, suggestion_text(line), where]
    return md_row(cells + [md(line.suite)])


def compact_row(line: BudgetLine) -> str:
    text = (
        f"- {STATUS_EMOJI[line.status]} {path(line)} ({md(line.suite)}): "
        f"{secs(line.measured)} of {secs(line.est_time)} ({pct(line.ratio)})"
    )
    suggestion = suggestion_text(line)
    return text + (f" → {suggestion}" if suggestion else "") + "\n"


def _class_table(line: BudgetLine) -> str:
    whole = line.measured or 0.0
    rows = [CLASS_HEAD]
    for c in line.classes:
        name = code(c.name) + ("" if c.complete else " (cut short)")
        share = pct(c.total / whole if whole else None)
        times = [secs(c.class_setup), secs(c.tests), secs(c.class_teardown), secs(c.total)]
        rows.append(md_row([name, *times, share]))
    share = pct(line.unattributed / whole if whole else None)
    unattributed = "_unattributed: start-up, imports, collection_"
    rows.append(md_row([unattributed, "", "", "", secs(line.unattributed), share]))
    return "".join(rows) + "\n"


def has_details(line: BudgetLine) -> bool:
    return bool(line.classes or line.message or line.in_flight)


def details(line: BudgetLine) -> str:
    """The folded breakdown of a line that `has_details`."""
    n = len(line.classes)
    summary = f"<code>{html(line.file)}</code> ({html(line.suite)})"
    if n:
        summary += f": {n} class{'es' if n != 1 else ''}, {secs(line.unattributed)} unattributed"
    out = [f"<details><summary>{summary}</summary>\n\n"]
    if line.message:
        out.append(f"{md(line.message)}\n\n")
    if line.in_flight:
        out.append(f"Running when it was cut off: {code(line.in_flight, cell=False)}\n\n")
    if line.classes:
        out.append(_class_table(line))
    out.append("</details>\n")
    return "".join(out)


def _suites_part(report: Report) -> Part:
    items = [
        md_row(
            [md(t.suite), f"{t.files:,}", secs(t.measured_total), secs(t.est_total)]
            + [pct(t.measured_total / t.est_total if t.est_total else None)]
            + [str(x) for x in (t.over, t.near, t.timeouts, t.failed)]
            + [secs(t.gpu_seconds)]
        )
        for t in report.suites
    ]
    return Part("\n### Suite totals\n\n", SUITE_HEAD, items, priority=NEVER, noun="suites")


def _file_parts(report: Report, blob: str | None, limit: int) -> list[Part]:
    """Per group: its table of files, then the folded per-file details (rendered only as far
    as the limit: with thousands of files, most could never be shown)."""
    short = short_names(line.file for line in report.lines)
    parts = []
    for statuses in GROUPS:
        heading, rows_prio, details_prio, noun = GROUP_LOOK[statuses[0]]
        # report.lines are worst first, so a group of several statuses keeps that order
        lines = [line for line in report.lines if line.status in statuses]
        title = f"\n### {heading} ({len(lines):,})\n\n"
        rows = [file_row(x, short, blob) for x in lines]
        parts.append(Part(title, FILE_HEAD, rows, priority=rows_prio, noun=noun))
        blocks, unshown = rendered_until(details, [x for x in lines if has_details(x)], limit)
        noun = "per-class breakdowns"
        parts.append(Part("\n", "", blocks, priority=details_prio, noun=noun, unshown=unshown))
    return parts


def _suggestions_part(report: Report) -> Part:
    items = [
        block_line(
            f"{line.file}: {suggestion_text(line)}  # "
            f"{f'was {line.est_time:g}' if line.est_time else 'not registered'}, "
            f"measured {secs(line.measured)}"
        )
        + "\n"
        for line in report.lines
        if line.suggestion is not None
    ]
    fence = fence_for(items)
    head, foot = f"{fence}text\n", f"{fence}\n"
    return Part("\n### Suggested budgets\n\n", head, items, foot, 10, "suggestions")


def _registry_parts(report: Report) -> list[Part]:
    errors = [f"- {code(str(p), cell=False)}\n" for p in report.problems]
    warnings = [f"- {code(str(p), cell=False)}\n" for p in report.warnings]
    flagged = [r for r in report.arch_rows if r.flags]
    arch = [
        md_row(
            [md(", ".join(r.flags)), md(r.case), md(r.group or ""), md(arch_cells(r))]
            + [code(f"{r.file}:{r.line}")]
        )
        for r in flagged
    ]
    return [
        Part("\n### Registry problems\n\n", "", errors, priority=10, noun="errors"),
        Part("\n### Registry warnings\n\n", "", warnings, priority=2, noun="warnings"),
        Part(
            "\n### Architecture rows not verified on CI hardware\n\n",
            ARCH_HEAD,
            arch,
            priority=9,
            noun="architecture rows",
        ),
        Part(
            "\n### Notes\n\n", "", [f"- {md(n)}\n" for n in report.notes], priority=2, noun="notes"
        ),
    ]


def _compact_attention(report: Report, attention: Part, room: int) -> None:
    """Even the lines that matter do not fit as a table: one line per file, then a prefix."""
    attention.replace([compact_row(line) for line in report.lines if line.status in ATTENTION])
    attention.noun = "more over/timeout/failed files (see the report artifact)"
    if attention.size() > room:
        attention.shrink_to(room)


def markdown(report: Report, limit: int = COMMENT_LIMIT, blob: str | None = None) -> str:
    """`blob`: `https://github.com/OWNER/REPO/blob/SHA` of the commit that ran, for file links."""
    top = f"{marker_for(report.kind)}\n## {md(report.title)}: {headline(report)}\n"
    if run_line(report):
        top += f"\n{md(run_line(report))}\n"
    parts = _file_parts(report, blob, limit)
    attention = parts[0]
    parts += [_suites_part(report), _suggestions_part(report), *_registry_parts(report)]
    parts.append(mermaid.part("Measured vs est_time", mermaid.run_chart(report)))
    total = fit_parts(top, parts, limit)
    if total > limit:
        room = attention.size() - (total - limit)
        _compact_attention(report, attention, room)
    return join(top, parts, limit)
