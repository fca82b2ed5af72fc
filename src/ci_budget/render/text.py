"""Text for a terminal: the registry table, the run report as aligned text, JSON, and the static
budget report (`diff --base REF --format text`). Pure.

Every field from data is made single-line (`escape.plain`, through `blocks.aligned`), so a
newline or `\r` in a message cannot start a line of its own. Lines that look like GitHub
workflow commands are defused where the text is printed (`render.escape.log_text`). The
markdown reports are in `run_md` and `diff_md`. The budget report leads each table with what
the reader decides on (risk, change), the names last.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ci_budget.budget.diff import Change, StaticReport
from ci_budget.budget.impact import SuiteImpact, pr_risk
from ci_budget.budget.verdict import run_verdict, static_verdict
from ci_budget.models import BudgetLine, Registration, Report, pct, secs
from ci_budget.render.blocks import aligned
from ci_budget.render.escape import plain
from ci_budget.render.words import (
    STATUS_WORD,
    WORD,
    Words,
    arch_cells,
    attempts_text,
    bar,
    budget,
    context,
    counts_line,
    gpu_delta,
    headline,
    history_note,
    measured_words,
    run_line,
    suggestion_text,
)

# ==== The registry and the run report =========================================================


def _suite_lines(suite: str, group: list[Registration]) -> list[str]:
    enabled = [r for r in group if r.enabled]
    extra = f", {len(group) - len(enabled)} disabled" if len(enabled) != len(group) else ""
    count = f"{len(group)} file{'s' if len(group) != 1 else ''}"
    name = plain(suite) if suite else '(no suite name: suite="")'
    out = [f"{name}  {count}{extra}  {secs(sum(r.est_time for r in enabled))}"]
    rows = []
    for r in group:
        flags = []
        if r.nightly:
            flags.append("nightly")
        if r.disabled is not None:
            flags.append(f"disabled: {r.disabled}" if r.disabled else "disabled")
        flag_text = f"[{', '.join(flags)}]" if flags else ""
        rows.append([secs(r.est_time), r.backend, f"{r.file}  {flag_text}".rstrip()])
    return out + aligned(rows, right={0}, indent="  ")


def registry_table(regs: Iterable[Registration]) -> str:
    """Registered files by suite: suite, file count, Σ est_time; then each file."""
    by_suite: dict[str, list[Registration]] = {}
    for reg in regs:
        by_suite.setdefault(reg.suite, []).append(reg)
    if not by_suite:
        return "no registered files\n"
    out = []
    for suite in sorted(by_suite, key=lambda s: (not s, s)):  # a nameless suite last
        group = sorted(by_suite[suite], key=lambda r: (-r.est_time, r.file))
        out += _suite_lines(suite, group) + [""]
    files = sum(len(g) for g in by_suite.values())
    est = sum(r.est_time for g in by_suite.values() for r in g if r.enabled)
    out.append(f"{files} files in {len(by_suite)} suites, {secs(est)} enabled budget")
    return "\n".join(out) + "\n"


def _file_rows(report: Report) -> list[str]:
    rows: list[list[str]] = [["STATUS", "USED", "", "MEASURED", "EST", "SUGGEST", "SUITE", "FILE"]]
    for line in report.lines:
        rows.append(
            [
                STATUS_WORD[line.status],
                pct(line.ratio),
                bar(line.ratio),
                secs(line.measured),
                budget(line),
                suggestion_text(line),
                line.suite,
                line.file,
            ]
        )
    return aligned(rows, right={1, 3, 4})


def _class_rows(line: BudgetLine) -> list[str]:
    def share(seconds: float) -> str:
        return pct(seconds / line.measured if line.measured else None)

    rows: list[list[str]] = [["CLASS", "SETUP", "TESTS", "TEARDOWN", "TOTAL", "SHARE"]]
    for c in line.classes:
        name = c.name + ("" if c.complete else " (cut short)")
        rows.append(
            [name, secs(c.class_setup), secs(c.tests), secs(c.class_teardown), secs(c.total)]
            + [share(c.total)]
        )
    rows.append(["(unattributed)", "", "", "", secs(line.unattributed), share(line.unattributed)])
    return aligned(rows, right={1, 2, 3, 4, 5}, indent="  ")


def _detail(line: BudgetLine, with_classes: bool = True) -> list[str]:
    out = [f"{plain(line.file)} ({plain(line.suite)}): {STATUS_WORD[line.status]}"]
    if line.message:
        out.append(f"  {plain(line.message)}")
    if line.in_flight:
        out.append(f"  running when cut off: {plain(line.in_flight)}")
    if line.attempts:
        out.append(f"  {plain(attempts_text(line))}")
    if line.classes and with_classes:
        out += _class_rows(line)
    return out + [""]


def _suite_rows(report: Report) -> list[str]:
    rows: list[list[object]] = [
        ["SUITE", "FILES", "MEASURED", "EST", "OVER", "NEAR", "TIMEOUT", "FAILED", "GPU-S"]
    ]
    for t in report.suites:
        rows.append(
            [t.suite, t.files, secs(t.measured_total), secs(t.est_total), t.over, t.near]
            + [t.timeouts, t.failed, secs(t.gpu_seconds)]
        )
    return aligned(rows, right=range(1, 9))


def _tail(report: Report) -> list[str]:
    out = [f"error: {plain(p)}" for p in report.problems]
    out += [f"warning: {plain(p)}" for p in report.warnings]
    flagged = [r for r in report.arch_rows if r.flags]
    if flagged:
        out.append("Architecture rows not verified on CI hardware:")
        for r in flagged:
            text = (
                f"{r.file}:{r.line}  {r.case}  [{r.group or '-'}]  {arch_cells(r)}  "
                f"flags: {', '.join(r.flags)}"
            )
            out.append("  " + plain(text))
    return out + [f"note: {plain(note)}" for note in report.notes]


CLASSES = ("all", "flagged", "none")


def _shows_detail(line: BudgetLine, classes: str) -> bool:
    """all: every file that ran with something to show; flagged: only files that are not ok;
    none: only the messages of flagged files, no class tables."""
    if not (line.classes or line.message or line.in_flight) or line.status == "not-run":
        return False
    return classes == "all" or line.status != "ok"


def terminal(report: Report, classes: str = "all") -> str:
    """The report as aligned plain text (no size limit: a terminal scrolls). `classes` says
    whose per-class breakdown is shown (`CLASSES`)."""
    title = f"{plain(report.title)} ({plain(report.kind)})"
    out = [headline(run_verdict(report), Words(name=plain, text=plain), title, mark=WORD)]
    if report.lines:
        out.append(plain(counts_line(report)))
    if run_line(report):
        out.append(plain(run_line(report)))
    out.append("")
    if report.lines:
        out += _file_rows(report) + [""]
    for line in report.lines:
        if _shows_detail(line, classes):
            out += _detail(line, with_classes=classes != "none")
    if report.suites:
        out += _suite_rows(report) + [""]
    out += _tail(report)
    return "\n".join(out).rstrip("\n") + "\n"


def json_chunks(report: Report) -> Iterator[str]:
    """The report as JSON, one budget line (a file, with every test case) per text line, so the
    writer never holds the whole text: with 100,000 test cases it is the largest output. The
    fields around `lines` follow it on the last line."""
    yield '{"lines": [\n'
    last = len(report.lines) - 1
    for i, line in enumerate(report.lines):
        yield line.model_dump_json() + (",\n" if i < last else "\n")
    rest = report.model_dump_json(exclude={"lines"})
    yield "]" + (", " + rest[1:] if rest != "{}" else "}") + "\n"


# ==== The static budget report ================================================================

_WHAT = {
    "est_time": "est_time",
    "moved": "moved",
    "disabled": "disabled",
    "enabled": "enabled",
    "added": "new registration",
    "new-file": "new file",
    "removed": "registration removed",
    "file-removed": "file removed",
    "unregistered": "lost its registration",
}


def _change(c: Change) -> str:
    if c.est_before is not None and c.est_after is not None and c.est_before != c.est_after:
        ratio = f" ({pct(c.delta_ratio, '+')})" if c.delta_ratio is not None else ""
        return f"{secs(c.est_before)} → {secs(c.est_after)}, {secs(c.delta, '+')}{ratio}"
    if c.est_before is None or c.est_after is None:
        return f"{secs(c.est_after if c.est_after is not None else c.est_before)}, {secs(c.delta, '+')}"
    return secs(c.est_after)


def _what(c: Change) -> str:
    words = [_WHAT.get(k, k) for k in c.kinds]
    if "moved" in c.kinds and c.suite_before:
        words[c.kinds.index("moved")] = f"moved from {c.suite_before}"
    return ", ".join(words)


def _suite(s: SuiteImpact) -> list[str]:
    shards = f"{s.shards_before} → {s.shards_after}"
    used = pct(s.makespan_after / s.timeout_s) if s.timeout_s else "-"
    makespan = f"{secs(s.makespan_before)} → {secs(s.makespan_after)} of {s.timeout_s / 60:g} min"
    est = f"{secs(s.est_before)} → {secs(s.est_after)}"
    risk = s.risk if pr_risk(s) == s.risk else f"{s.risk}, not made worse"
    return [risk, used, makespan, est, shards, gpu_delta(s.gpu_seconds_delta), s.suite]


def diff_terminal(report: StaticReport) -> str:
    base = report.base_commit[:12] or report.base_ref
    v = static_verdict(report)
    w = Words(name=plain, text=plain)
    out = [headline(v, w, "ci-budget (budget)", mark=WORD)]
    if not report.changes and not report.errors_introduced:
        out.append(f"No registration changes against {plain(base)}.")
    else:
        out.append(
            f"est_time changes vs {plain(base)}: {len(report.changes)} registration change(s); "
            f"budget {secs(report.est_delta, '+')} per run; GPU cost "
            f"{gpu_delta(report.gpu_seconds_delta)} per run"
        )
    if told := context(v, w):
        out.append(told)
    out += [f"note: {plain(n)}" for n in report.notes]
    if report.errors_introduced:
        rows: list[Sequence[object]]
        rows = [(f"{p.file}:{p.line}", p.message) for p in report.errors_introduced]
        out += [
            "",
            "Registry errors introduced:",
            *aligned([("WHERE", "ERROR"), *rows], indent="  "),
        ]
    if report.suites:
        head = ("RISK", "USED", "MAKESPAN vs TIMEOUT", "Σ EST_TIME", "SHARDS", "GPU COST", "SUITE")
        rows = [head, *(_suite(s) for s in report.suites)]
        out += ["", *aligned(rows, right={1})]
        walls = [(", ".join(secs(w) for w in s.loads_after), s.suite) for s in report.suites]
        out += [
            "",
            f"Predicted wall per shard (shard 0 first; from {report.predicted_from}):",
            *aligned([("WALLS", "SUITE"), *walls], indent="  "),
        ]
    if report.changes:
        rows = [
            (_change(c), measured_words(c, report.predicted_from), _what(c))
            + (c.suite_after or c.suite_before or "", f"{c.file}:{c.line}")
            for c in report.changes
        ]
        out += ["", *aligned([("CHANGE", "MEASURED, HEADROOM", "WHAT", "SUITE", "FILE"), *rows])]
    if report.history:
        rows = [(history_note(n), n.suite, n.file) for n in report.history]
        out += [
            "",
            "Measured history:",
            *aligned([("MEASURED", "SUITE", "FILE"), *rows], indent="  "),
        ]
    if report.arch_rows or report.arch_problems:
        rows = [(", ".join(r.flags), r.case, f"{r.file}:{r.line}") for r in report.arch_rows]
        rows += [(p.message, "(table)", f"{p.file}:{p.line}") for p in report.arch_problems]
        out += [
            "",
            "Architecture table flags:",
            *aligned([("FLAGS", "CASE", "ROW"), *rows], indent="  "),
        ]
    return "\n".join(out) + "\n"
