"""`history show --format markdown`: the statistics table and, per series, a picture of its
measured runs, rolling p50/p90 and est_time over time. Pure; fits a step summary or a comment.

File and suite names come from results files and go through `escape`; the pictures are dropped
first (one per series) when the text runs out of room.
"""

from __future__ import annotations

from ci_budget.history.model import TREND_WINDOW, Stats, TrendPoint
from ci_budget.render import mermaid
from ci_budget.render.escape import code
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
