"""`history show --format markdown`: the statistics table and, per series, a picture of its
measured runs, rolling p50/p90 and est_time over time. Pure; fits a step summary or a comment.

File and suite names come from results files and go through `escape`; the pictures are dropped
first (one per series) when the text runs out of room.
"""

from __future__ import annotations

from ci_budget.history.model import TREND_WINDOW, Stats, TrendPoint
from ci_budget.render import mermaid
from ci_budget.render.escape import code, md
from ci_budget.render.fit import COMMENT_LIMIT, Part, fit_parts, join
from ci_budget.render.table import md_head, md_row
from ci_budget.units import secs

COLUMNS = ["p90", "p50", "max", "passed", "runs", "timeouts", "failed", "file", "suite"]


def _row(s: Stats) -> str:
    timeouts = f"{s.timeouts} (≥ {secs(s.timeout_lower_bound)})" if s.timeouts else "0"
    return md_row(
        [secs(s.p90), secs(s.p50), secs(s.max), str(s.n), str(s.runs), timeouts, str(s.failed)]
        + [code(s.file), code(s.suite) if s.suite else "(no suite)"]
    )


def markdown(
    stats: list[Stats], trends: dict[tuple[str, str], list[TrendPoint]], limit=COMMENT_LIMIT
) -> str:
    top = "## ci-budget: measured history\n\n"
    if not stats:
        return top + "(no samples)\n"
    rows = [_row(s) for s in stats]
    table = Part("", md_head(COLUMNS, right=range(7)), rows, priority=2, noun="more row(s)")
    charts = []
    for s in stats[: mermaid.MAX_FILES]:
        chart = mermaid.trend_chart(s.file, trends.get((s.file, s.suite), []))
        if chart:
            where = code(s.suite) if s.suite else "(no suite)"
            charts.append(f"{code(s.file)} in {where}\n\n{chart}\n")
    title = f"Measured runs, rolling p50/p90 (last {TREND_WINDOW} passing runs) and est_time"
    parts = [table, mermaid.part(title, charts)]
    fit_parts(top, parts, limit)
    return join(top, parts, limit)


PR_MARKER = "<!-- ci-budget:est-time -->"
RULES = {
    "sglang": "the measured p90 itself, as sglang's `update_est_time.py` writes it",
    "margin": "the measured p90 x (1 + margin), rounded up",
}


def _why(s) -> str:
    timeouts = f"; {s.timeouts} timeout(s), ≥ {secs(s.timeout_lower_bound)}" if s.timeouts else ""
    share = f" ({s.delta / s.est_time:+.0%})" if s.est_time else ""
    missed = (
        f"; sglang's update_est_time.py misses it: {s.updater_missed}" if s.updater is False else ""
    )
    return f"{secs(s.delta, '+')}{share} from p90 over {s.n} passing run(s){timeouts}{missed}"


def est_time_pr(found, left, rule: str, limit: int = COMMENT_LIMIT) -> str:
    """The est_time pull request's body: a table of old, new, measured and why, then what was
    left alone (disabled and nightly-only registrations) and the files registering more than
    once (each registration's literal is rewritten for its own suite). Pure."""
    top = (
        f"{PR_MARKER}\n## est_time from measured runs\n\n{len(found)} registration(s) "
        f"rewritten: new = {RULES[rule]}, where it differs from est_time by ≥ 30 s and ≥ 30 %. "
        "Only each `est_time=` literal changes, found by the AST (registrations a text match "
        "misses included).\n\n"
    )
    rows = [
        md_row(
            [
                code(s.file),
                str(s.line),
                code(s.suite),
                f"{s.est_time:g}",
                f"{s.suggested:g}",
                secs(s.p90),
                md(_why(s)),
            ]
        )  # fmt: skip
        for s in found
    ]
    head = md_head(
        ["file", "line", "suite", "old", "new", "measured p90", "why"], right=(1, 3, 4, 5)
    )
    counts: dict[str, int] = {}
    for s in found:
        counts[s.file] = counts.get(s.file, 0) + 1
    multi = [
        f"- {code(f, cell=False)}: {n} registrations\n" for f, n in sorted(counts.items()) if n > 1
    ]
    alone = [
        f"- {code(r.file, cell=False)} ({code(r.suite, cell=False)}): "
        f"{'disabled' if not r.enabled else 'nightly only'}\n"
        for r in left
    ]
    parts = [
        Part("", head, rows, priority=5, noun="row(s)"),
        Part("\n### Files registering more than once\n\n", "", multi, priority=3, noun="file(s)"),
        Part(
            "\n### Left alone (est_time not rewritten)\n\n",
            "",
            alone,
            priority=2,
            noun="registration(s)",
        ),  # fmt: skip
    ]
    fit_parts(top, parts, limit)
    return join(top, parts, limit)
