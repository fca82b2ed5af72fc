"""Pictures as Mermaid blocks, which GitHub draws in PR comments and step summaries. Pure.

Names in a picture come from a PR (file and suite names): Mermaid has no escaping for them, so
labels keep only characters that cannot end a label or start a directive, and are cut short.
Pictures are items of `fit.Part`s of the lowest priority: the first things dropped when a comment
runs out of room, with a note saying so.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import TYPE_CHECKING

from ci_budget.models import Report
from ci_budget.render.blocks import Part

if TYPE_CHECKING:  # types only: a run report needs neither the static report nor history
    from ci_budget.budget.impact import SuiteImpact
    from ci_budget.history.model import TrendPoint

PRIORITY = 0  # dropped before anything else
MAX_FILES = 12  # files in the run report's chart
MAX_BARS = 6  # shards drawn one by one; more are drawn as longest, median and shortest
MATERIAL_S = 60.0  # a makespan change a Gantt is drawn for: this many seconds, and
MATERIAL_SHARE = 0.05  # this share of the timeout
MAX_POINTS = 30  # runs in a history chart
_UNSAFE = re.compile(r"[^A-Za-z0-9_./+ -]")
CHART_STATUSES = ("timeout", "over", "failed", "near")


def label(text: str, limit: int = 40) -> str:
    clean = _UNSAFE.sub("_", text).strip() or "_"
    return clean if len(clean) <= limit else clean[: limit - 1] + "_"


def block(lines: list[str]) -> str:
    return "```mermaid\n" + "\n".join(lines) + "\n```\n"


def part(title: str, texts: str | list[str] | None) -> Part:
    items = [texts] if isinstance(texts, str) else list(texts or [])
    return Part(f"\n### {title}\n\n", "", items, priority=PRIORITY, noun="picture(s)")


def _axis(longest: float) -> str:
    return "%M:%S" if longest < 3600 else "%H:%M"


def _clock(seconds: float) -> str:
    """Seconds as a wall-clock time of day: Mermaid reads it in the viewer's time zone and
    writes the axis in it too, so 0 s reads 00:00 everywhere (unix seconds would read 05:30
    in India). Capped just below a day."""
    whole = min(max(0, round(seconds)), 86_399)
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def material(s: SuiteImpact) -> bool:
    """A suite whose picture says something: its shard count changes, or its predicted
    makespan moves by at least `MATERIAL_S` seconds and `MATERIAL_SHARE` of its timeout."""
    if s.timeout_s <= 0 or not (s.loads_before or s.loads_after):
        return False
    moved = abs(s.makespan_after - s.makespan_before)
    return s.shards_before != s.shards_after or moved >= max(
        MATERIAL_S, MATERIAL_SHARE * s.timeout_s
    )


def _bars(loads: list[float]) -> list[tuple[str, float]]:
    """(label, seconds) per bar: every shard, or for more than `MAX_BARS` the longest, the
    median and the shortest (a dozen equal bars say no more than these three)."""
    if len(loads) <= MAX_BARS:
        return [(f"shard {i}", seconds) for i, seconds in enumerate(loads, 1)]
    order = sorted(range(len(loads)), key=lambda i: (-loads[i], i))
    n = len(loads)
    picks = (("longest", order[0]), ("median", order[n // 2]), ("shortest", order[-1]))
    return [(f"shard {i + 1} {word} of {n}", loads[i]) for word, i in picks]


def shard_gantt(s: SuiteImpact) -> str | None:
    """One suite's planned shards (est_time each) before and after, against its timeout."""
    if s.timeout_s <= 0 or not (s.loads_before or s.loads_after):
        return None
    longest = max([s.timeout_s, *s.loads_before, *s.loads_after])
    shards = f"{len(s.loads_before)} → {len(s.loads_after)} shard(s)"
    title = f"{label(s.suite, 60)}: {shards} vs its {s.timeout_s / 60:g} min timeout"
    lines = ["gantt", f"    title {title}", "    dateFormat HH:mm:ss"]
    lines.append(f"    axisFormat {_axis(longest)}")
    for when, loads in (("before", s.loads_before), ("after", s.loads_after)):
        lines.append(f"    section {when}")
        for i, (name, seconds) in enumerate(_bars(loads), 1):
            tag = "crit, " if seconds > s.timeout_s else ""
            end = _clock(max(1, seconds))
            lines.append(f"    {name} {seconds:.0f}s :{tag}{when[0]}{i}, 00:00:00, {end}")
    lines.append("    section timeout")
    at = _clock(s.timeout_s)
    lines.append(f"    {s.timeout_s / 60:g} min :milestone, t, {at}, {at}")
    return block(lines)


def _dates(points: list[TrendPoint]) -> list[str]:
    return _day_labels([p.date for p in points])


def _day_labels(dates: list[datetime | None]) -> list[str]:
    """x-axis labels, unique (a categorical axis merges equal ones): month-day (hour:minute
    when every run is of one day; UTC), else the run's number."""
    days = {d.date() for d in dates if d}
    when = "%H:%M" if len(days) == 1 else "%m-%d"  # one day's runs by their time
    names = [f"{d:{when}}" if d else f"run {i}" for i, d in enumerate(dates, 1)]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}.{seen[name]}")
    return out


def trend_chart(file: str, points: list[TrendPoint], est_now: float | None = None) -> str | None:
    """A file's measured runs (bars), rolling p50 and p90 (lines) and est_time (line) over
    time, the last `MAX_POINTS` passing runs; `est_now`: the budget the PR proposes."""
    points = points[-MAX_POINTS:]
    if not points:
        return None
    est = [p.est_time if p.est_time is not None else est_now for p in points]
    if est_now is not None:
        est[-1] = est_now
    top = max([p.elapsed for p in points] + [e for e in est if e is not None])
    # a title Mermaid draws whole at GitHub's width: at most 28 + 29 characters
    name = label(file.rsplit("/", 1)[-1].removesuffix(".py"), 28)
    lines = [
        "xychart-beta",
        f'    title "{name}: runs, p50/p90, est_time (s)"',
        "    x-axis [" + ", ".join(f'"{d}"' for d in _dates(points)) + "]",
        f'    y-axis "seconds" 0 --> {max(1, round(top * 1.1))}',
        "    bar [" + ", ".join(f"{p.elapsed:.1f}" for p in points) + "]",
        "    line [" + ", ".join(f"{p.p50:.1f}" for p in points) + "]",
        "    line [" + ", ".join(f"{p.p90:.1f}" for p in points) + "]",
    ]
    if all(e is not None for e in est):
        lines.append("    line [" + ", ".join(f"{e:g}" for e in est) + "]")
    return block(lines)


def run_chart(report: Report) -> str | None:
    """Each file's measured time as a share of its own est_time (bars, one a file, its name
    whole beside it) against the budget, 100 % (a line at one level: it joins no two files'
    numbers), for the files that matter: every flagged file, then the longest others, at most
    `MAX_FILES`."""
    lines_ = [x for x in report.lines if x.measured is not None and x.est_time]
    flagged = [x for x in lines_ if x.status in CHART_STATUSES]
    others = sorted(
        (x for x in lines_ if x.status not in CHART_STATUSES), key=lambda x: -(x.measured or 0)
    )
    chosen = (flagged + others)[:MAX_FILES]
    if not chosen:
        return None
    names = [label(x.file.rsplit("/", 1)[-1].removesuffix(".py"), 40) for x in chosen]
    used = [100 * (x.measured or 0) / x.est_time for x in chosen]
    return block(
        [
            "xychart-beta horizontal",
            '    title "Measured, % of its est_time (line: the budget)"',
            "    x-axis [" + ", ".join(f'"{n}"' for n in names) + "]",
            f'    y-axis "% of est_time" 0 --> {max(110, round(max(used) * 1.1))}',
            "    bar [" + ", ".join(f"{u:.0f}" for u in used) + "]",
            "    line [" + ", ".join("100" for _ in chosen) + "]",
        ]
    )


def headroom_chart(suite: str, runs: list[tuple[datetime | None, float]], timeout: float):
    """A suite's headroom over time: timeout minus its slowest shard's wall in each run (bars),
    the last `MAX_POINTS` runs, with zero (the timeout) as the axis floor's line."""
    runs = runs[-MAX_POINTS:]
    if not runs:
        return None
    room = [(timeout - w) / 60 for _, w in runs]
    low, high = min(0.0, *room), max(1.0, *room)
    lines = [
        "xychart-beta",
        f'    title "{label(suite, 48)}: headroom to the {timeout / 60:g} min timeout, min"',
        "    x-axis [" + ", ".join(f'"{d}"' for d in _day_labels([d for d, _ in runs])) + "]",
        f'    y-axis "minutes" {math.floor(low)} --> {math.ceil(high * 1.1)}',
        "    bar [" + ", ".join(f"{r:.1f}" for r in room) + "]",
        "    line [" + ", ".join("0" for _ in room) + "]",
    ]
    return block(lines)
