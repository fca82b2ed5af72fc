"""Text for humans: the registry table, the report as terminal text, markdown or JSON.

Pure: strings in, strings out. The markdown renderer (size limits, tiers) is in `render_md`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ci_budget.models import BudgetLine, Registration, Report

STATUS_WORD = {
    "timeout": "timeout",
    "over": "over",
    "failed": "failed",
    "near": "near",
    "stale": "stale",
    "ok": "ok",
    "not-run": "not run",
}
STATUS_EMOJI = {
    "timeout": "⏱️",
    "over": "🔴",
    "failed": "❌",
    "near": "🟡",
    "stale": "💤",
    "ok": "✅",
    "not-run": "⚪",
}
HEADLINE_WORD = {
    "timeout": "timed out",
    "over": "over budget",
    "failed": "failed",
    "near": "near",
    "stale": "stale",
    "ok": "ok",
    "not-run": "not run",
}
ORDER = ("timeout", "over", "failed", "near", "stale", "ok", "not-run")


def secs(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) < 10:  # class setup and small files: whole seconds would read as 0s
        return f"{value:.1f}s"
    return f"{value:,.0f}s"


def pct(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio * 100:.0f}%"


def bar(ratio: float | None, width: int = 10) -> str:
    if ratio is None:
        return "░" * width
    filled = min(width, max(0, math.floor(ratio * width + 0.5)))
    return "█" * filled + "░" * (width - filled)


def suggestion_text(line: BudgetLine) -> str:
    if line.suggestion is None:
        return ""
    if line.status == "timeout":
        return f"est_time>={line.suggestion}"
    return f"est_time={line.suggestion}"


def counts(report: Report) -> dict[str, int]:
    out = dict.fromkeys(ORDER, 0)
    for line in report.lines:
        out[line.status] += 1
    return out


def headline(report: Report) -> str:
    c = counts(report)
    if not report.lines:
        return "no results"
    parts = [f"{c[s]:,} {HEADLINE_WORD[s]}" for s in ORDER if c[s]]
    est = sum(t.est_total for t in report.suites)
    measured = sum(t.measured_total for t in report.suites)
    n = len(report.suites)
    return (
        f"{', '.join(parts)} — {secs(measured)} measured of {secs(est)} budgeted "
        f"in {n} suite{'s' if n != 1 else ''}"
    )


def run_line(report: Report, limit: int = 6) -> str:
    """Where the runs ran: GPU (detected arch), runner config, shard, commit; distinct ones."""
    seen: list[str] = []
    for meta in report.meta:
        bits = []
        if meta.gpu is not None:
            cc = (
                f", compute capability {meta.gpu.compute_capability}"
                if meta.gpu.compute_capability
                else ""
            )
            count = f"{meta.gpu.count}× " if meta.gpu.count > 1 else ""
            bits.append(f"{count}{meta.gpu.name} ({meta.gpu.arch or 'arch unknown'}{cc})")
        else:
            bits.append("no GPU detected")
        if meta.runner_config:
            configured = f", configured {meta.configured_arch}" if meta.configured_arch else ""
            bits.append(f"runner config {meta.runner_config}{configured}")
        if meta.partition:
            bits.append(f"shard {meta.partition}")
        if meta.commit:
            bits.append(f"commit {meta.commit[:10]}")
        text = " · ".join(bits)
        if text not in seen:
            seen.append(text)
    if not seen:
        return ""
    more = f"; and {len(seen) - limit} more" if len(seen) > limit else ""
    return "Ran on " + "; ".join(seen[:limit]) + more


def arch_cells(row) -> str:
    """What each architecture measured, e.g. `sm90: 1.23; sm100: n/a; fixed: 1.01`."""
    parts = [
        f"{arch}: {cell.raw or ('n/a' if cell.na else '')}" for arch, cell in row.reverted.items()
    ]
    if row.fixed is not None:
        parts.append(f"fixed: {row.fixed.raw or 'n/a'}")
    parts += [f"this run on {key}: {value:.3g}" for key, value in row.measured.items()]
    return "; ".join(parts)


def registry_table(regs: Iterable[Registration]) -> str:
    """Registered files by suite: suite, file count, Σ est_time; then each file."""
    by_suite: dict[str, list[Registration]] = {}
    for reg in regs:
        by_suite.setdefault(reg.suite, []).append(reg)
    if not by_suite:
        return "no registered files\n"
    out = []
    total_files = total_est = 0.0
    for suite in sorted(by_suite):
        group = sorted(by_suite[suite], key=lambda r: (-r.est_time, r.file))
        enabled = [r for r in group if r.enabled]
        est = sum(r.est_time for r in enabled)
        total_files += len(group)
        total_est += est
        extra = f", {len(group) - len(enabled)} disabled" if len(enabled) != len(group) else ""
        out.append(
            f"{suite}  {len(group)} file{'s' if len(group) != 1 else ''}{extra}  {secs(est)}"
        )
        width = max(len(secs(r.est_time)) for r in group)
        for r in group:
            flags = []
            if r.nightly:
                flags.append("nightly")
            if r.disabled is not None:
                flags.append(f"disabled: {r.disabled}" if r.disabled else "disabled")
            flag_text = f"  [{', '.join(flags)}]" if flags else ""
            out.append(f"  {secs(r.est_time):>{width}}  {r.backend:<5}  {r.file}{flag_text}")
        out.append("")
    out.append(
        f"{int(total_files)} files in {len(by_suite)} suites, {secs(total_est)} enabled budget"
    )
    return "\n".join(out) + "\n"


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


def terminal(report: Report) -> str:
    """The report as aligned plain text (no size limit: a terminal scrolls)."""
    out = [f"{report.title} ({report.kind}): {headline(report)}"]
    if run_line(report):
        out.append(run_line(report))
    out.append("")
    if report.lines:
        rows = [["STATUS", "USED", "", "MEASURED", "EST", "SUGGEST", "SUITE", "FILE"]]
        for line in report.lines:
            rows.append(
                [
                    STATUS_WORD[line.status],
                    pct(line.ratio),
                    bar(line.ratio),
                    secs(line.measured),
                    secs(line.est_time or None),
                    suggestion_text(line),
                    line.suite,
                    line.file,
                ]
            )
        out += _table(rows, right={1, 3, 4})
        out.append("")
    for line in report.lines:
        if line.status in ("ok", "not-run") or not (line.classes or line.message or line.in_flight):
            continue
        out.append(f"{line.file} ({line.suite}): {STATUS_WORD[line.status]}")
        if line.message:
            out.append(f"  {line.message}")
        if line.in_flight:
            out.append(f"  running when cut off: {line.in_flight}")
        if line.classes:
            rows = [["CLASS", "SETUP", "TESTS", "TEARDOWN", "TOTAL", "SHARE"]]
            for c in line.classes:
                name = c.name + ("" if c.complete else " (cut short)")
                rows.append(
                    [
                        name,
                        secs(c.class_setup),
                        secs(c.tests),
                        secs(c.class_teardown),
                        secs(c.total),
                        pct(c.total / line.measured if line.measured else None),
                    ]
                )
            rows.append(
                [
                    "(unattributed)",
                    "",
                    "",
                    "",
                    secs(line.unattributed),
                    pct(line.unattributed / line.measured if line.measured else None),
                ]
            )
            out += ["  " + r for r in _table(rows, right={1, 2, 3, 4, 5})]
        out.append("")
    if report.suites:
        rows = [["SUITE", "FILES", "MEASURED", "EST", "OVER", "NEAR", "TIMEOUT", "FAILED", "GPU-S"]]
        for t in report.suites:
            rows.append(
                [
                    t.suite,
                    str(t.files),
                    secs(t.measured_total),
                    secs(t.est_total),
                    str(t.over),
                    str(t.near),
                    str(t.timeouts),
                    str(t.failed),
                    secs(t.gpu_seconds),
                ]
            )
        out += _table(rows, right=set(range(1, 9)))
        out.append("")
    for p in report.problems:
        out.append(f"error: {p}")
    for p in report.warnings:
        out.append(f"warning: {p}")
    flagged = [r for r in report.arch_rows if r.flags]
    if flagged:
        out.append("Architecture rows not verified on CI hardware:")
        for r in flagged:
            out.append(
                f"  {r.file}:{r.line}  {r.case}  [{r.group or '-'}]  {arch_cells(r)}  "
                f"flags: {', '.join(r.flags)}"
            )
    for note in report.notes:
        out.append(f"note: {note}")
    return "\n".join(out).rstrip("\n") + "\n"


def markdown(report: Report, limit: int = 65536) -> str:
    from ci_budget.render.run_md import markdown as render_markdown

    return render_markdown(report, limit)


def json_text(report: Report) -> str:
    return report.model_dump_json(indent=2) + "\n"
