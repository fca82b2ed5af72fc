"""The folded part of the run report: everything below the suite totals that a reader opens
when they need it. Pure; every string from results goes through `escape`.

Files of one status share a fold (`<details>`); a long group is folded again per suite, without
the suite column, so that hundreds of rows fit one comment. Per-class breakdowns and folded
groups are rendered only as far as the comment limit (see `fit.rendered_until`).
"""

from __future__ import annotations

from ci_budget.budget.status import ATTENTION, STATUS_ORDER, SUGGEST_FOR
from ci_budget.models import BudgetLine, Report
from ci_budget.render.escape import code, html, md
from ci_budget.render.fit import Part, rendered_until
from ci_budget.render.table import md_head, md_row
from ci_budget.render.words import STATUS_EMOJI, STATUS_WORD, budget, suggestion_text
from ci_budget.units import pct, secs

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
