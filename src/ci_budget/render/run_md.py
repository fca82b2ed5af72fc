"""The run report as GitHub markdown that always fits a limit (65,536 characters for a comment).

Read at sglang's scale (850 files, 17 suites) the first screen holds what a reader acts on: the
verdict, the first `ACTION_ROWS` files that need action (timed out, over budget, failed) and
`GUARD_ROWS` guard rows, then the suite totals; everything else follows, folded in `<details>`
and grouped by status (and by suite when a group is long). Parts are cut by `fit` in a fixed
order (per-class detail of passing files first, ok rows next, ...). Files that need action are
never cut; if even they do not fit, those below the suite totals switch to one line per file.
Every string from results goes through `escape`. Linear in the number of files.
"""

from __future__ import annotations

from ci_budget.budget.status import ATTENTION, STATUS_ORDER
from ci_budget.budget.verdict import GUARD_FLAGS, run_verdict
from ci_budget.models import BudgetLine, Report
from ci_budget.render import mermaid
from ci_budget.render.escape import block_line, code, fence_for, md
from ci_budget.render.fit import COMMENT_LIMIT, NEVER, Part, fit_parts, join
from ci_budget.render.paths import file_cell, short_names
from ci_budget.render.run_folds import (
    FOLD_END,
    REST_LOOK,
    collapse,
    details_parts,
    fold,
    group_parts,
    rest_head,
    rest_row,
)
from ci_budget.render.sticky import marker_for
from ci_budget.render.table import md_head, md_row
from ci_budget.render.verdict import Words, headline
from ci_budget.render.words import (
    STATUS_EMOJI,
    STATUS_WORD,
    arch_cells,
    attempts_text,
    budget,
    run_places,
    suggestion_text,
)
from ci_budget.render.words import headline as counts_line
from ci_budget.units import pct, secs

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
