"""History's reports. `history show --format markdown`: the statistics table and, per series, a
picture of its measured runs, rolling p50/p90 and est_time over time; `history watch`: its text,
its JSON, and the markdown of its one tracking issue. Pure; fits a step summary or a comment.

File, suite and commit subjects come from results files, run files and a repository's history:
in markdown they go through `escape`, and in text through `escape.plain`. In `show` the
pictures are dropped first (one per series) when the text runs out of room. The watch issue
opens with the suites at risk (a table that fits the first screen), then one picture per suite
at risk, the step changes (events first), est_time against measured p90, and every suite last,
folded.
"""

from __future__ import annotations

from ci_budget.history.model import TREND_WINDOW, Stats, TrendPoint
from ci_budget.history.watch import Commit, Event, RunRef, Step, SuiteWatch, Watch
from ci_budget.models import secs
from ci_budget.render import mermaid
from ci_budget.render.blocks import (
    COMMENT_LIMIT,
    Part,
    aligned_text,
    fit_parts,
    join,
    marker_for,
    md_head,
    md_row,
)
from ci_budget.render.escape import code, md, plain

# ==== history show ============================================================================

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


PR_MARKER = marker_for("est-time")
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


# ==== history watch ===========================================================================

MARKER = marker_for("watch")  # the tracking issue's marker: one issue, edited in place
MAX_COMMITS = 5  # commits listed per step


def _when(days: float) -> str:
    return f"{days:.0f} d" if days >= 1 else f"{days * 24:.0f} h"


def crossing(s: SuiteWatch) -> str:
    """When the trend crosses the timeout, as an interval; or why it does not say."""
    if s.trend is None:
        return "too few runs for a trend"
    if not s.trend.rising:
        return "no rising trend"
    early, late = s.crossing or (0.0, None)
    if s.headroom is not None and s.headroom <= 0:
        return "already over"
    return f"in {_when(early)}–{_when(late) if late is not None else '∞'}"


def slope(s: SuiteWatch) -> str:
    if s.trend is None:
        return "–"
    t = s.trend
    word = "" if t.rising or t.falling else " (no trend)"
    return f"{t.slope:+.0f} s/day [{t.low:+.0f}, {t.high:+.0f}]{word}"


def suite_step(s: SuiteWatch) -> str:
    """The slowest shard's last sustained step, or nothing."""
    if not s.steps:
        return ""
    step = s.steps[-1]
    day = f"{step.first_after.date:%m-%d}" if step.first_after.date else "?"
    return f"{secs(step.before)} → {secs(step.after)} from {day}"


def _run(r: RunRef) -> str:
    day = f"{r.date:%m-%d %H:%M}" if r.date else "undated"
    sha = f" {r.sha[:9]}" if r.sha else ""
    return f"{r.run} ({day}{sha})"


def _commits(commits: list[Commit], reasons=None, limit: int = MAX_COMMITS) -> str:
    """The first `limit` commits, each with why it bears on the file (`reasons`: sha -> words)."""
    reasons = reasons or {}
    shown = [
        f"{c.sha[:9]}{' [' + '+'.join(reasons[c.sha]) + ']' if c.sha in reasons else ''} "
        f"{c.subject[:60]}"
        for c in commits[:limit]
    ]
    more = f" … +{len(commits) - limit}" if len(commits) > limit else ""
    return "; ".join(shown) + more if shown else "none"


def _narrowed(step: Step) -> str:
    if step.range_size is None:
        return "range not in the checkout"
    if step.range_size == 0:
        return "same commit (runner, image or flake)"
    return f"{len(step.commits)} of {step.range_size}: {_commits(step.commits, step.reasons)}"


# --- JSON ------------------------------------------------------------------------------------


def _ref(r: RunRef) -> dict:
    return {"run": r.run, "date": r.date.isoformat() if r.date else None, "sha": r.sha}


def _commit_json(c: Commit, step: Step | None = None) -> dict:
    out: dict[str, object] = {"sha": c.sha, "subject": c.subject}
    if step is not None:
        out["why"] = step.reasons.get(c.sha, [])
    return out


def _suite_json(s: SuiteWatch) -> dict:
    t = s.trend
    return {
        "suite": s.suite, "timeout": s.timeout, "level": s.level, "headroom": s.headroom,
        "at_risk": s.at_risk, "runs": len(s.walls),
        "trend": None if t is None else {"slope_s_per_day": t.slope, "low": t.low, "high": t.high,
                                         "rising": t.rising, "falling": t.falling},
        "crossing_days": None if s.crossing is None else list(s.crossing),
        "steps": [_step_json(step) for step in s.steps],
        "walls": [_ref(r) | {"wall": w} for r, w in s.walls],
    }  # fmt: skip


def _step_json(s: Step) -> dict:
    return {
        "file": s.file, "suite": s.suite, "before": s.before, "after": s.after,
        "delta": s.delta, "ratio": s.after / s.before if s.before else None,
        "last_before": _ref(s.last_before), "first_after": _ref(s.first_after),
        "range_commits": s.range_size, "event": s.event,
        "commits": [_commit_json(c, s) for c in s.commits],
    }  # fmt: skip


def watch_json(w: Watch) -> dict:
    return {
        "suites": [_suite_json(s) for s in w.suites],
        "steps": [_step_json(s) for s in w.steps],
        "events": [
            {
                "last_before": _ref(e.last_before),
                "first_after": _ref(e.first_after),
                "files": [[s.file, s.suite] for s in e.steps],
                "ci_commits": [_commit_json(c) for c in e.commits],
            }
            for e in w.events
        ],  # fmt: skip
        "estimates": [vars(c) for c in w.estimates],
    }


# --- text ------------------------------------------------------------------------------------


def watch_text(w: Watch) -> str:
    rows = [("suite", "timeout", "now", "headroom", "trend (95 %)", "crosses", "step", "")]
    for s in w.suites:
        rows.append((s.suite, secs(s.timeout), secs(s.level), secs(s.headroom), slope(s),
                     crossing(s), suite_step(s), "AT RISK" if s.at_risk else ""))  # fmt: skip
    out = [aligned_text(rows, right=(1, 2, 3))]
    out.append(f"\n{len(w.steps)} sustained step(s), {len(w.events)} shared event(s)\n")
    for st in w.steps:
        event = f" [event {st.event + 1}]" if st.event is not None else ""
        out.append(
            plain(f"{st.file} in {st.suite}: {secs(st.before)} -> {secs(st.after)} "
                  f"({secs(st.delta, '+')}) between {_run(st.last_before)} and "
                  f"{_run(st.first_after)}{event}; commits: {_narrowed(st)}") + "\n"
        )  # fmt: skip
    for i, e in enumerate(w.events, 1):
        out.append(
            plain(f"event {i}: {len(e.steps)} files between {_run(e.last_before)} and "
                  f"{_run(e.first_after)}; CI/requirements/image commits: "
                  f"{_commits(e.commits)}") + "\n"
        )  # fmt: skip
    out.append(f"\n{len(w.estimates)} est_time(s) off measured p90\n")
    for c in w.estimates:
        out.append(plain(f"{c.file}:{c.line}: {c.suite}: est_time {c.est_time:g}, p90 "
                         f"{secs(c.p90)} over {c.n} run(s): {c.verdict}") + "\n")  # fmt: skip
    return "".join(out)


# --- markdown ----------------------------------------------------------------------------------


def _risk_row(s: SuiteWatch) -> str:
    return md_row([code(s.suite), secs(s.timeout), secs(s.level), secs(s.headroom),
                   md(slope(s)), md(crossing(s)), md(suite_step(s))])  # fmt: skip


def _step_row(s: Step) -> str:
    event = f"event {s.event + 1}" if s.event is not None else ""
    return md_row([
        code(s.file), code(s.suite), f"{secs(s.before)} → {secs(s.after)}",
        secs(s.delta, "+"), md(_run(s.last_before)), md(_run(s.first_after)), event,
        md(_narrowed(s)),
    ])  # fmt: skip


def _event_item(i: int, e: Event) -> str:
    files = ", ".join(code(s.file) for s in e.steps[:8])
    return (
        f"- **event {i}**: {len(e.steps)} files step between {md(_run(e.last_before))} and "
        f"{md(_run(e.first_after))} ({files}); commits touching CI, requirements or images: "
        f"{md(_commits(e.commits))}\n"
    )


def _parts(w: Watch) -> list[Part]:
    risky = [s for s in w.suites if s.at_risk]
    cols = ["suite", "timeout", "slowest shard now", "headroom", "trend (95 %)", "crosses", "step"]
    pics = [mermaid.headroom_chart(s.suite, [(r.date, x) for r, x in s.walls], s.timeout)
            for s in risky]  # fmt: skip
    steps_cols = ["file", "suite", "before → after", "change", "last run before",
                  "first run after", "event", "commits (touched file, import or CI)"]  # fmt: skip
    est_cols = ["file", "suite", "est_time", "p90", "runs", "verdict"]
    return [
        Part("### Suites at risk\n\n", md_head(cols, right=(1, 2, 3)) if risky else "",
             [_risk_row(s) for s in risky] or ["_None._\n"], priority=9, noun="suite(s)"),
        Part("\n### Headroom over time (minutes to the timeout, per run)\n\n", "",
             [p for p in pics if p], priority=6, noun="picture(s)"),  # before the steps go
        Part("\n### Events: steps shared by several files at one run boundary\n\n", "",
             [_event_item(i, e) for i, e in enumerate(w.events, 1)], priority=5, noun="event(s)"),
        Part(f"\n### Step changes (≥ 20 % and ≥ 30 s, sustained): {len(w.steps)}\n\n",
             md_head(steps_cols, right=(3,)), [_step_row(s) for s in w.steps], priority=4,
             noun="step(s)"),
        Part("\n### est_time against measured p90\n\n", md_head(est_cols, right=(2, 3, 4)),
             [md_row([code(c.file), code(c.suite), f"{c.est_time:g}", secs(c.p90), str(c.n),
                      c.verdict]) for c in w.estimates], priority=3, noun="file(s)"),
        Part("\n<details><summary>Every suite</summary>\n\n", md_head(cols, right=(1, 2, 3)),
             [_risk_row(s) for s in w.suites], priority=2, noun="suite(s)", close="\n</details>\n"),
    ]  # fmt: skip


def watch_markdown(w: Watch, limit: int = COMMENT_LIMIT) -> str:
    risky = sum(s.at_risk for s in w.suites)
    top = (
        f"{MARKER}\n## ci-budget watch: {risky} suite(s) at risk, {len(w.steps)} step "
        f"change(s), {len(w.estimates)} est_time(s) off\n\n"
    )
    parts = _parts(w)
    fit_parts(top, parts, limit)
    return join(top, parts, limit)
