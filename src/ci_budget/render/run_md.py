"""The run report as GitHub markdown that always fits a limit (65,536 characters for a comment).

Read at sglang's scale (850 files, 17 suites) the first screen holds what a reader acts on: the
verdict, the first `ACTION_ROWS` files that need action (timed out, over budget, failed) and
`GUARD_ROWS` guard rows, then the suite totals; everything else follows, folded in `<details>`
and grouped by status (and by suite when a group is long). Parts are cut by `blocks` in a fixed
order (per-class detail of passing files first, ok rows next, ...). Files that need action are
never cut; if even they do not fit, those below the suite totals switch to one line per file.
Every string from results goes through `escape`. Linear in the number of files.

The folded part: files of one status share a fold (`<details>`); a long group is folded again
per suite, without the suite column, so that hundreds of rows fit one comment. Per-class
breakdowns and folded groups are rendered only as far as the comment limit
(`blocks.rendered_until`).
"""

from __future__ import annotations

from ci_budget.budget.status import ATTENTION, STATUS_ORDER, SUGGEST_FOR
from ci_budget.budget.verdict import GUARD_FLAGS, run_verdict
from ci_budget.models import BudgetLine, Report, pct, secs
from ci_budget.render import mermaid
from ci_budget.render.blocks import (
    COMMENT_LIMIT,
    NEVER,
    Part,
    file_cell,
    fit_parts,
    join,
    marker_for,
    md_head,
    md_row,
    rendered_until,
    short_names,
)
from ci_budget.render.escape import block_line, code, fence_for, html, md
from ci_budget.render.words import (
    STATUS_EMOJI,
    STATUS_WORD,
    Words,
    arch_cells,
    attempts_text,
    budget,
    counts_line,
    headline,
    run_places,
    suggestion_text,
)

# ==== The report ==============================================================================

ACTION_ROWS = 10  # files that need action, shown above the suite totals
GUARD_ROWS = 4  # flagged guard rows shown there
PLACES = 2  # where the runs ran: named at the top up to this many, else listed at the end
# Verdict first: at GitHub's ~1,000 px the columns a reader decides on come before the names.
FILE_HEAD = md_head(
    ["Status", "Used", "Measured", "Budget", "Suggestion", "File", "Suite"], right={1, 2, 3}
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
    """A file that needs action: its use as a number (a bar of an overrun is always full)."""
    status = f"{STATUS_EMOJI[line.status]} {STATUS_WORD[line.status]}"
    used = pct(line.ratio)
    est = budget(line)
    name = (short or {}).get(line.file)
    where = file_cell(line.file, line.line, name, blob) if name and line.line else path(line)
    cells = [status, used, secs(line.measured), est, _advice(line), where]
    return md_row(cells + [md(line.suite)])


def _advice(line: BudgetLine) -> str:
    """The suggestion cell: a retried file's attempts first (why it is flaky), then est_time."""
    return "; ".join(x for x in (md(attempts_text(line)), suggestion_text(line)) if x)


def compact_row(line: BudgetLine) -> str:
    text = (
        f"- {STATUS_EMOJI[line.status]} {path(line)} ({md(line.suite)}): "
        f"{secs(line.measured)} of {secs(line.est_time)} ({pct(line.ratio)})"
    )
    suggestion = _advice(line)
    return text + (f" → {suggestion}" if suggestion else "") + "\n"


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


def _cost(line: BudgetLine) -> tuple:
    """Files that need action, the costliest first: timeouts, failures, then overruns by the
    seconds past their budget (9 s of a 1 s budget is 900 %, but 8 s)."""
    return (STATUS_ORDER.index(line.status), -((line.measured or 0.0) - line.est_time))


def _action_parts(lines: list[BudgetLine], short, blob) -> tuple[Part, Part]:
    """(the first `ACTION_ROWS` files that need action, the others, folded): never cut.
    `lines`: sorted by `_cost`."""
    rows = [file_row(x, short, blob) for x in lines[:ACTION_ROWS]]
    more = len(lines) - ACTION_ROWS
    below = f"\n_… and {more:,} more, below the suite totals._\n" if more > 0 else ""
    first = Part(f"\n### Files that need action ({len(lines):,})\n\n", FILE_HEAD, rows, below)
    rest = Part(
        fold(f"🔴 {max(more, 0):,} more files that need action"), rest_head(True, True, True),
        [rest_row(x, short, True, True, True) for x in lines[ACTION_ROWS:]],
        noun="more files that need action", close=FOLD_END,
    )  # fmt: skip
    return first, rest


def _guard_parts(report: Report) -> tuple[Part, Part]:
    """Flagged guard rows, those the verdict counts first: the first few above the suite
    totals, the rest folded below them."""
    flagged = sorted(
        (r for r in report.arch_rows if r.flags),
        key=lambda r: not any(f in GUARD_FLAGS for f in r.flags),
    )
    rows = [
        md_row(
            [md(", ".join(r.flags)), md(r.case), md(r.group or ""), md(arch_cells(r))]
            + [code(f"{r.file}:{r.line}")]
        )
        for r in flagged
    ]
    title = f"\n### Architecture rows not verified on CI hardware ({len(rows):,})\n\n"
    first = Part(title, ARCH_HEAD, rows[:GUARD_ROWS], noun="architecture rows")
    rest = Part(
        fold(f"{max(len(rows) - GUARD_ROWS, 0):,} more architecture rows"), ARCH_HEAD,
        rows[GUARD_ROWS:], priority=9, noun="architecture rows", close=FOLD_END,
    )  # fmt: skip
    return first, rest


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
    title = fold(f"Suggested budgets ({len(items):,})")
    return Part(title, head, items, foot, 10, "suggestions", close=FOLD_END)


def _registry_parts(report: Report) -> list[Part]:
    errors = [f"- {code(str(p), cell=False)}\n" for p in report.problems]
    warnings = [f"- {code(str(p), cell=False)}\n" for p in report.warnings]
    notes = [f"- {md(n)}\n" for n in report.notes]
    return [
        Part("\n### Registry problems\n\n", "", errors, priority=10, noun="errors"),
        Part(fold(f"Registry warnings ({len(warnings):,})"), "", warnings, priority=2,
             noun="warnings", close=FOLD_END),
        Part(fold(f"Notes ({len(notes):,})"), "", notes, priority=2, noun="notes",
             close=FOLD_END),
    ]  # fmt: skip


def _places_part(places: list[str]) -> Part:
    items = [f"- {md(p)}\n" for p in places] if len(places) > PLACES else []
    title = fold(f"Where it ran ({len(places):,} runner set-ups)")
    return Part(title, "", items, priority=9, noun="runner set-ups", close=FOLD_END)


def _top(report: Report, places: list[str]) -> str:
    v = run_verdict(report)
    short = short_names(n for f in v.findings for n in f.names)
    words = Words(name=code, text=md, short=lambda p: short.get(p, p))
    # No results at all (report --allow-empty): no job left any, so nothing ran.
    ok = "nothing to act on" if report.lines else "nothing ran, no job left results"
    top = f"{marker_for(report.kind)}\n## {headline(v, words, md(report.title), ok)}\n"
    if report.lines:
        top += f"\n{md(counts_line(report))}\n"
    if 0 < len(places) <= PLACES:
        top += "\n" + md("Ran on " + "; ".join(places)) + "\n"
    elif places:
        top += f"\nRan in {len(report.meta):,} jobs on {len(places):,} runner set-ups (listed at the end).\n"
    return top


def _compact(part: Part, lines: list[BudgetLine], room: int) -> None:
    """Even the files that need action do not fit as a table: one line per file, then a
    prefix of those."""
    part.replace([compact_row(x) for x in lines])
    part.noun = "more over/timeout/failed files (see the report artifact)"
    if part.size() > room:
        part.shrink_to(room)


def _fit(top: str, parts: list[Part], limit: int, attention: list[BudgetLine]) -> None:
    """Fit the parts; if the files that need action alone are too long, turn those below the
    suite totals into a list (then those above them too) and fit the others around it."""
    first, more = parts[0], parts[3]
    total = fit_parts(top, parts, limit)
    for part, lines in ((more, attention[ACTION_ROWS:]), (first, attention[:ACTION_ROWS])):
        if total <= limit or not lines:
            continue
        _compact(part, lines, part.size() - (total - limit))
        for other in parts:
            if other.priority != NEVER:
                other.keep = -1
        total = fit_parts(top, parts, limit)


def markdown(report: Report, limit: int = COMMENT_LIMIT, blob: str | None = None) -> str:
    """`blob`: `https://github.com/OWNER/REPO/blob/SHA` of the commit that ran, for file links."""
    places = run_places(report)
    top = _top(report, places)
    short = short_names(line.file for line in report.lines)
    attention = sorted((x for x in report.lines if x.status in ATTENTION), key=_cost)
    first, more = _action_parts(attention, short, blob)
    guard_first, guard_more = _guard_parts(report)
    parts = [first, guard_first, _suites_part(report), more, guard_more]
    parts += _registry_parts(report)[:1]
    if report.lines:
        parts.append(Part(items=["\n### Everything else\n"]))
    groups = []
    for status in REST_LOOK:
        lines = [x for x in report.lines if x.status == status]
        groups.append(group_parts(status, lines, short, limit) if lines else [])
        parts += groups[-1]
    parts += [*details_parts(report, limit), _suggestions_part(report)]
    parts += [*_registry_parts(report)[1:], _places_part(places)]
    parts.append(mermaid.part("Measured vs est_time", mermaid.run_chart(report)))
    _fit(top, parts, limit, attention)
    for group in groups:
        collapse(group)
    return join(top, parts, limit)


# ==== The folded part =========================================================================

BY_SUITE = 30  # a folded group of more files than this is folded again per suite
# Folded groups below the suite totals: heading, rows priority, noun for the note.
REST_LOOK = {
    "near": ("🟡 Near budget", 7, "near files"),
    "stale": ("💤 Budget far above measured time", 6, "stale files"),
    "ok": ("✅ Within budget", 3, "ok files"),
    "cancelled": ("⏹️ Cancelled", 4, "cancelled files"),
    "not-run": ("⚪ Not run", 4, "not-run files"),
}
assert tuple(REST_LOOK) == tuple(s for s in STATUS_ORDER if s not in ATTENTION)
CLASS_HEAD = md_head(
    ["Class", "Class setup", "Tests", "Class teardown", "Total", "Share"], right={1, 2, 3, 4, 5}
)
FOLD_END = "\n</details>\n"


def fold(summary: str) -> str:
    """The opening of a folded block (`FOLD_END` closes it); `summary` is escaped HTML."""
    return f"\n<details><summary>{summary}</summary>\n\n"


def rest_head(suggest: bool, suite: bool, status: bool = False) -> str:
    columns = ["Status"] * status + ["Used", "Measured", "Budget"] + ["Suggestion"] * suggest
    columns += ["File"] + ["Suite"] * suite
    return md_head(columns, right={i + status for i in (0, 1, 2)})


def rest_row(
    line: BudgetLine, short: dict[str, str], suggest: bool, suite: bool, status: bool = False
) -> str:
    """A folded row: lighter than `file_row` (no bar, no link; the status only where the fold
    holds several), so that hundreds fit one comment."""
    cells = [f"{STATUS_EMOJI[line.status]} {STATUS_WORD[line.status]}"] * status
    cells += [pct(line.ratio), secs(line.measured), budget(line)]
    cells += [suggestion_text(line)] * suggest
    name = code(short.get(line.file, line.file)) if line.line else md(line.file)
    return md_row([*cells, name] + [md(line.suite)] * suite)


def _class_table(line: BudgetLine) -> str:
    whole = line.measured or 0.0
    rows = [CLASS_HEAD]
    for c in line.classes:  # the summary names the file: a class by its own name
        own = c.name.removeprefix(f"{line.file}::")
        name = code(own) + ("" if c.complete else " (cut short)")
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


def group_parts(
    status: str, lines: list[BudgetLine], short: dict[str, str], limit: int
) -> list[Part]:
    """One status's files, folded; a long group folded again per suite (no suite column),
    each rendered only as far as the limit."""
    heading, priority, noun = REST_LOOK[status]
    suggest = status in SUGGEST_FOR
    if len(lines) <= BY_SUITE:
        rows = [rest_row(x, short, suggest, suite=True) for x in lines]
        head = rest_head(suggest, suite=True)
        summary = f"{heading} ({len(lines):,})"
        return [Part(fold(summary), head, rows, priority=priority, noun=noun, close=FOLD_END)]
    by_suite: dict[str, list[BudgetLine]] = {}
    for line in lines:
        by_suite.setdefault(line.suite, []).append(line)
    outer = fold(f"{heading} ({len(lines):,}), by suite")
    parts = [Part(items=[outer.lstrip("\n")], title="\n")]
    head = rest_head(suggest, suite=False)
    for suite in sorted(by_suite):
        group = by_suite[suite]
        rows, unshown = rendered_until(lambda x: rest_row(x, short, suggest, False), group, limit)
        summary = f"<code>{html(suite)}</code> ({len(group):,})"
        parts.append(
            Part(fold(summary), head, rows, priority=priority, noun=noun, unshown=unshown,
                 close=FOLD_END)
        )  # fmt: skip
    parts.append(Part(items=[FOLD_END]))
    return parts


def details_parts(report: Report, limit: int) -> list[Part]:
    """Per-class breakdowns, folded: of the files that need action, then of the others
    (rendered only as far as the limit: with thousands of files, most could never be shown)."""
    noun = "per-class breakdowns"
    parts = []
    for title, priority, pick in (
        ("Per-class breakdown of the files that need action", 8, lambda s: s in ATTENTION),
        ("Per-class breakdown of the other files", 1, lambda s: s not in ATTENTION),
    ):
        todo = [x for x in report.lines if pick(x.status) and has_details(x)]
        blocks, unshown = rendered_until(details, todo, limit)
        parts.append(
            Part(fold(f"{title} ({len(todo):,})"), "", blocks, priority=priority, noun=noun,
                 unshown=unshown, close=FOLD_END)
        )  # fmt: skip
    return parts


def collapse(group: list[Part]) -> None:
    """A group folded per suite whose every fold was cut empty says so in one line."""
    inner = group[1:-1]
    if len(group) < 3 or any(p.keep != 0 for p in inner):
        return
    dropped = sum(p.count() for p in inner)
    group[0].replace([inner[0].note(dropped)])
    group[0].title = ""
    for part in group[1:]:
        part.replace([])
