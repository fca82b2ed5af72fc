"""The report as GitHub markdown that always fits a limit (65,536 characters for a PR comment).

Every part is rendered once, then measured; parts are cut in a fixed order (per-class detail of
passing files first, ok rows next, ...) keeping a prefix of each cut part. Over, timeout and
failed lines are never cut; if even they do not fit they switch to one line per file. Linear in
the number of files.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ci_budget.models import BudgetLine, Report
from ci_budget.render.text import (
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

NEVER = 99  # priority of parts that are never cut
ATTENTION = ("timeout", "over", "failed")
GROUPS = [
    # statuses, heading, rows priority, details priority, noun for "... N <noun> not shown"
    (ATTENTION, "🔴 Over budget, timed out or failed", NEVER, 8, "files"),
    (("near",), "🟡 Near budget", 7, 5, "near files"),
    (("stale",), "💤 Budget far above measured time", 6, 1, "stale files"),
    (("ok",), "✅ Within budget", 3, 1, "ok files"),
    (("not-run",), "⚪ Not run", 4, 1, "not-run files"),
]
FILE_HEAD = (
    "| File | Suite | Budget | Measured | Used | Status | Suggestion |\n"
    "|---|---|--:|--:|---|---|---|\n"
)


def cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def code(text: str) -> str:
    """`text` as inline code, safe inside a table cell."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{cell(text)}{pad}{fence}"


def html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass
class Part:
    title: str = ""  # shown whenever the part has items
    head: str = ""  # shown when at least one item is kept (a table header, a fence)
    items: list[str] = field(default_factory=list)
    foot: str = ""  # shown when at least one item is kept
    priority: int = NEVER
    noun: str = "items"
    keep: int = -1  # -1: all

    def note(self, dropped: int) -> str:
        return f"\n_… {dropped:,} {self.noun} not shown (too long for one comment)._\n"

    def size(self, keep: int, prefix: list[int]) -> int:
        if not self.items:
            return 0
        n = len(self.items)
        body = len(self.head) + prefix[keep] + len(self.foot) if keep else 0
        return len(self.title) + body + (len(self.note(n - keep)) if keep < n else 0)

    def render(self) -> str:
        if not self.items:
            return ""
        n = len(self.items)
        keep = n if self.keep < 0 else self.keep
        text = self.title
        if keep:
            text += self.head + "".join(self.items[:keep]) + self.foot
        if keep < n:
            text += self.note(n - keep)
        return text


def _prefix(items: list[str]) -> list[int]:
    out = [0]
    for item in items:
        out.append(out[-1] + len(item))
    return out


def file_row(line: BudgetLine) -> str:
    status = f"{STATUS_EMOJI[line.status]} {STATUS_WORD[line.status]}"
    used = f"`{bar(line.ratio)}` {pct(line.ratio)}" if line.ratio is not None else "-"
    return (
        f"| {code(line.file)} | {cell(line.suite)} | {secs(line.est_time or None)} | "
        f"{secs(line.measured)} | {used} | {status} | {cell(suggestion_text(line))} |\n"
    )


def compact_row(line: BudgetLine) -> str:
    text = (
        f"- {STATUS_EMOJI[line.status]} {code(line.file)} ({cell(line.suite)}): "
        f"{secs(line.measured)} of {secs(line.est_time)} ({pct(line.ratio)})"
    )
    suggestion = suggestion_text(line)
    return text + (f" → {suggestion}" if suggestion else "") + "\n"


def details(line: BudgetLine) -> str | None:
    if not (line.classes or line.message or line.in_flight):
        return None
    n = len(line.classes)
    summary = f"<code>{html(line.file)}</code> ({html(line.suite)})"
    if n:
        summary += f": {n} class{'es' if n != 1 else ''}, {secs(line.unattributed)} unattributed"
    out = [f"<details><summary>{summary}</summary>\n\n"]
    if line.message:
        out.append(f"{cell(line.message)}\n\n")
    if line.in_flight:
        out.append(f"Running when it was cut off: {code(line.in_flight)}\n\n")
    if line.classes:
        out.append(
            "| Class | Class setup | Tests | Class teardown | Total | Share |\n"
            "|---|--:|--:|--:|--:|--:|\n"
        )
        whole = line.measured or 0.0
        for c in line.classes:
            name = code(c.name) + ("" if c.complete else " (cut short)")
            share = pct(c.total / whole if whole else None)
            out.append(
                f"| {name} | {secs(c.class_setup)} | {secs(c.tests)} | "
                f"{secs(c.class_teardown)} | {secs(c.total)} | {share} |\n"
            )
        share = pct(line.unattributed / whole if whole else None)
        out.append(
            f"| _unattributed: start-up, imports, collection_ | | | | "
            f"{secs(line.unattributed)} | {share} |\n\n"
        )
    out.append("</details>\n")
    return "".join(out)


def _suites_part(report: Report) -> Part:
    items = [
        f"| {cell(t.suite)} | {t.files:,} | {secs(t.measured_total)} | {secs(t.est_total)} | "
        f"{pct(t.measured_total / t.est_total if t.est_total else None)} | {t.over} | {t.near} "
        f"| {t.timeouts} | {t.failed} | {secs(t.gpu_seconds)} |\n"
        for t in report.suites
    ]
    head = (
        "| Suite | Files | Measured | Budget | Used | Over | Near | Timeouts | Failed "
        "| GPU-seconds |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    return Part("\n### Suite totals\n\n", head, items, priority=NEVER, noun="suites")


def _parts(report: Report) -> tuple[list[Part], Part | None]:
    parts: list[Part] = []
    attention: Part | None = None
    by_status: dict[str, list[BudgetLine]] = {}
    for line in report.lines:
        by_status.setdefault(line.status, []).append(line)
    for statuses, heading, rows_prio, details_prio, noun in GROUPS:
        lines = [line for s in statuses for line in by_status.get(s, [])]
        if len(statuses) > 1:  # keep the report's worst-first order across statuses
            order = {id(line): i for i, line in enumerate(report.lines)}
            lines.sort(key=lambda line: order[id(line)])
        title = f"\n### {heading} ({len(lines):,})\n\n"
        rows = Part(title, FILE_HEAD, [file_row(x) for x in lines], priority=rows_prio, noun=noun)
        parts.append(rows)
        if rows_prio == NEVER:
            attention = rows
        blocks = [d for d in map(details, lines) if d]
        parts.append(Part("\n", "", blocks, priority=details_prio, noun="per-class breakdowns"))
    parts.append(_suites_part(report))
    suggestions = [
        f"{line.file}: {suggestion_text(line)}  # "
        f"{f'was {line.est_time:g}' if line.est_time else 'not registered'}, "
        f"measured {secs(line.measured)}\n"
        for line in report.lines
        if line.suggestion is not None
    ]
    parts.append(
        Part("\n### Suggested budgets\n\n", "```text\n", suggestions, "```\n", 10, "suggestions")
    )
    errors = [f"- {code(str(p))}\n" for p in report.problems]
    parts.append(Part("\n### Registry problems\n\n", "", errors, priority=10, noun="errors"))
    warnings = [f"- {code(str(p))}\n" for p in report.warnings]
    parts.append(Part("\n### Registry warnings\n\n", "", warnings, priority=2, noun="warnings"))
    flagged = [r for r in report.arch_rows if r.flags]
    arch = [
        f"| {code(f'{r.file}:{r.line}')} | {cell(r.case)} | {cell(r.group or '')} | "
        f"{cell(arch_cells(r))} | {cell(', '.join(r.flags))} |\n"
        for r in flagged
    ]
    arch_head = "| File | Case | Fix | Measured per arch | Flags |\n|---|---|---|---|---|\n"
    parts.append(
        Part(
            "\n### Architecture rows not verified on CI hardware\n\n",
            arch_head,
            arch,
            priority=9,
            noun="architecture rows",
        )
    )
    notes = [f"- {cell(n)}\n" for n in report.notes]
    parts.append(Part("\n### Notes\n\n", "", notes, priority=2, noun="notes"))
    return parts, attention


def _fit(part: Part, prefix: list[int], room: int) -> int:
    """The most items of `part` whose rendering (with its note) fits in `room` characters."""
    n = len(part.items)
    budget = room - len(part.title) - len(part.head) - len(part.foot) - len(part.note(n))
    keep = max(0, bisect.bisect_right(prefix, budget) - 1)
    keep = min(keep, n)
    while keep > 0 and part.size(keep, prefix) > room:
        keep -= 1
    return keep


def markdown(report: Report, limit: int = 65536) -> str:
    top = f"<!-- ci-budget:{report.kind} -->\n## {report.title}: {headline(report)}\n"
    if run_line(report):
        top += f"\n{cell(run_line(report))}\n"
    parts, attention = _parts(report)
    prefixes = [_prefix(p.items) for p in parts]
    sizes = [p.size(len(p.items), pre) for p, pre in zip(parts, prefixes, strict=True)]
    total = len(top) + sum(sizes)
    # Lowest priority first; among equals, the one further down the page first.
    order = sorted(
        (i for i, p in enumerate(parts) if p.priority != NEVER and p.items),
        key=lambda i: (parts[i].priority, -i),
    )
    for i in order:
        if total <= limit:
            break
        room = sizes[i] - (total - limit)
        keep = _fit(parts[i], prefixes[i], room) if room > 0 else 0
        parts[i].keep = keep
        new = parts[i].size(keep, prefixes[i])
        total += new - sizes[i]
        sizes[i] = new
    if total > limit and attention is not None:
        # Even the lines that matter do not fit as a table: one line per file, then a prefix.
        i = parts.index(attention)
        compact = [compact_row(line) for line in report.lines if line.status in ATTENTION]
        attention.head, attention.items, attention.keep = "", compact, -1
        attention.noun = "more over/timeout/failed files (see the report artifact)"
        prefixes[i] = _prefix(compact)
        new = attention.size(len(compact), prefixes[i])
        total += new - sizes[i]
        sizes[i] = new
        if total > limit:
            attention.keep = _fit(attention, prefixes[i], sizes[i] - (total - limit))
    text = top + "".join(p.render() for p in parts)
    if len(text) > limit:  # only for absurdly small limits: a hard cut, still marked
        cut = "\n…\n"
        text = text[: max(0, limit - len(cut))] + cut
        text = text[:limit]
    return text
