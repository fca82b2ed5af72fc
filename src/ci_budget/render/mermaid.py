"""Pictures as Mermaid blocks, which GitHub draws in PR comments and step summaries. Pure.

Names in a picture come from a PR (file and suite names): Mermaid has no escaping for them, so
labels keep only characters that cannot end a label or start a directive, and are cut short.
Each picture is one `fit.Part` of the lowest priority: the first thing dropped when a comment
runs out of room, with a note saying so.
"""

from __future__ import annotations

import re

from ci_budget.budget.diff import StaticReport
from ci_budget.models import Report
from ci_budget.render.fit import Part

PRIORITY = 0  # dropped before anything else
MAX_SUITES = 6
MAX_FILES = 12
_UNSAFE = re.compile(r"[^A-Za-z0-9_./+ -]")
CHART_STATUSES = ("timeout", "over", "failed", "near")


def label(text: str, limit: int = 40) -> str:
    clean = _UNSAFE.sub("_", text).strip() or "_"
    return clean if len(clean) <= limit else clean[: limit - 1] + "_"


def block(lines: list[str]) -> str:
    return "```mermaid\n" + "\n".join(lines) + "\n```\n"


def part(title: str, text: str | None) -> Part:
    items = [text] if text else []
    return Part(f"\n### {title}\n\n", "", items, priority=PRIORITY, noun="picture(s)")


def suite_gantt(report: StaticReport) -> str | None:
    """Each affected suite's predicted makespan (its longest shard) before and after the PR,
    against the stage timeout, on one time axis."""
    suites = [s for s in report.suites if s.timeout_s > 0][:MAX_SUITES]
    if not suites:
        return None
    longest = max(max(s.timeout_s, s.makespan_before, s.makespan_after) for s in suites)
    axis = "%M:%S" if longest < 3600 else "%H:%M"
    lines = ["gantt", "    title Predicted makespan vs stage timeout", "    dateFormat X"]
    lines.append(f"    axisFormat {axis}")
    for i, s in enumerate(suites):
        lines.append(f"    section {label(s.suite)}")
        for when, shards, seconds in (
            ("before", s.shards_before, s.makespan_before),
            ("after", s.shards_after, s.makespan_after),
        ):
            tag = "crit, " if seconds > s.timeout_s else ""
            name = f"{when} {shards} shard(s) {seconds:.0f}s"
            lines.append(f"    {name} :{tag}s{i}{when[0]}, 0, {max(1, round(seconds))}")
        lines.append(f"    timeout {s.timeout_s / 60:g} min :milestone, {round(s.timeout_s)}, 0")
    return block(lines)


def run_chart(report: Report) -> str | None:
    """Measured time (bars) against est_time (line) for the files that matter: every flagged
    file, then the longest others, at most `MAX_FILES`."""
    lines_ = [x for x in report.lines if x.measured is not None and x.est_time]
    flagged = [x for x in lines_ if x.status in CHART_STATUSES]
    others = sorted(
        (x for x in lines_ if x.status not in CHART_STATUSES), key=lambda x: -(x.measured or 0)
    )
    chosen = (flagged + others)[:MAX_FILES]
    if not chosen:
        return None
    names = [label(x.file.rsplit("/", 1)[-1].removesuffix(".py"), 16) for x in chosen]
    top = max(max(x.measured or 0, x.est_time) for x in chosen)
    return block(
        [
            "xychart-beta",
            '    title "Measured (bars) vs est_time (line), seconds"',
            "    x-axis [" + ", ".join(f'"{n}"' for n in names) + "]",
            f'    y-axis "seconds" 0 --> {max(1, round(top * 1.1))}',
            "    bar [" + ", ".join(f"{x.measured:.1f}" for x in chosen) + "]",
            "    line [" + ", ".join(f"{x.est_time:g}" for x in chosen) + "]",
        ]
    )
