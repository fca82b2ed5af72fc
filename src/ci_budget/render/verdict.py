"""The verdict in words: the headline of both reports and the context line under it. Pure.

Names in a verdict (files, suites, guard cases) come from a PR: the caller passes the escaping
for its medium (`code`/`md` for markdown, `plain` for a terminal) and a short form for paths.
A finding of at most `NAMES` things names them; of more, it counts them (the tables below name
them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ci_budget.budget.verdict import Finding, Verdict

ICON = {"ok": "✅", "warn": "⚠️", "fail": "🛑"}
WORD = {"ok": "OK", "warn": "WARNING", "fail": "FAILING"}  # a terminal's marks
NAMES = 2
# kind: (noun, its plural, predicate) for findings that count files or errors
_COUNTED = {
    "timeout": ("file", "files", "timed out"),
    "failed": ("file", "files", "failed"),
    "over": ("file", "files", "over budget"),
    "flaky": ("file", "files", "passed only on a retry"),
    "registry-error": ("registry error", "registry errors", "introduced"),
    "below-p90": ("est_time", "est_times", "below the measured p90"),
    "unverified": ("guard row", "guard rows", "unverified on {arch}"),
    "silent": ("guard row", "guard rows", "silent on {arch}"),
}
_STAGE = {"stage-over": "over", "stage-near": "near"}


@dataclass
class Words:
    """How names are written: `name` a path or suite (code), `text` prose (a guard case),
    `short` a path's short form."""

    name: Callable[[str], str]
    text: Callable[[str], str]
    short: Callable[[str], str] = str


def arch_name(arch: str | None) -> str:
    return arch.upper() if arch else "the CI arch"  # sm90 -> SM90, as guard tables write it


def _names(f: Finding, w: Words) -> str:
    guard = f.kind in ("unverified", "silent")
    shown = [w.text(x) if guard else w.name(w.short(x)) for x in f.names[:NAMES]]
    if f.detail:
        shown = [f"{x}: {d}" for x, d in zip(shown, f.detail, strict=False)]
    return ", ".join(shown)


def _its(f: Finding) -> str:
    return "its" if f.count == 1 else "their"


def phrase(f: Finding, w: Words) -> str:
    """One finding in words, e.g. `2 files timed out (a.py, b.py)`."""
    if f.kind in _STAGE:
        names = ", ".join(w.name(x) for x in f.names[:NAMES])
        more = f" and {f.count - NAMES:,} more" if f.count > NAMES else ""
        detail = f" ({'; '.join(f.detail[:NAMES])})" if f.detail else ""
        return f"{names}{more} {_STAGE[f.kind]} {_its(f)} stage timeout{detail}"
    if f.kind == "nothing-ran":
        return f"nothing ran ({w.text(f.detail[0])})"
    if f.kind == "elsewhere":
        return "results of another " + "; another ".join(w.text(d) for d in f.detail)
    one, many, predicate = _COUNTED[f.kind]
    predicate = predicate.format(arch=w.text(arch_name(f.arch)))
    names = f" ({_names(f, w)})" if f.count <= NAMES else ""  # more: the tables name them
    return f"{f.count:,} {one if f.count == 1 else many} {predicate}{names}"


def headline(
    v: Verdict, w: Words, title: str, ok: str = "nothing to act on", mark: dict = ICON
) -> str:
    """`⚠️ title: a; b`: the verdict's mark, then its findings, worst first."""
    return f"{mark[v.level]} {title}: " + ("; ".join(phrase(f, w) for f in v.findings) or ok)


def context(v: Verdict, w: Words) -> str:
    """What is true but not this PR's doing, as one sentence ("" for nothing)."""
    parts = []
    for f in v.context:
        one = f.count == 1
        if f.kind in _STAGE:
            names = ", ".join(w.name(x) for x in f.names[:NAMES])
            more = f" and {f.count - NAMES:,} more" if f.count > NAMES else ""
            detail = f" ({'; '.join(f.detail[:NAMES])})" if f.detail else ""
            parts.append(
                f"{names}{more} {'was' if one else 'were'} already {_STAGE[f.kind]} {_its(f)} "
                f"stage timeout{detail} and {'is' if one else 'are'} not made worse"
            )
        elif f.kind in ("unverified", "silent"):
            rows = "guard row" if one else "guard rows"
            arch = w.text(arch_name(f.arch))
            names = f" ({_names(f, w)})" if f.count <= NAMES else ""
            parts.append(f"{f.count:,} {rows} already {f.kind} on {arch} at the base{names}")
    return ("Not this PR's doing: " + "; ".join(parts) + ".") if parts else ""
