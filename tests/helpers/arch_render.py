"""Rendering fixed-width and markdown measured tables from scratch, as sglang writes them: only the
property tests use it (they render tables, then check that parsing and editing them round-trips)."""

from __future__ import annotations

from dataclasses import dataclass

from ci_budget.arch.layout import FIXED, REVERTED


@dataclass
class Spec:
    """A column to render: kind is reverted or fixed; arch_label like `SM90 (H200)` or None."""

    kind: str
    arch_label: str | None = None


GAP = 3


def render_fixed(
    columns: list[Spec],
    rows: list[tuple[str | None, str, list[str]]],
    indent: int = 2,
    two_level: bool = True,
    label_headers: bool = False,
) -> list[str]:
    """Lines of a fixed-width table; rows are (group shown on this row or None, case, cells)."""
    groups = [g or "" for g, _, _ in rows]
    gw = max((len(g) for g in groups), default=0)
    cw = max([len(c) for _, c, _ in rows] + ([4] if label_headers else []))
    if label_headers:
        gw = max(gw, 3) if gw else 0
    case_x = indent + (gw + GAP if gw else 0)
    bottom, top = [], []
    for spec in columns:
        if not two_level:
            word = "reverted" if spec.kind == REVERTED else "fixed"
            bottom.append(f"{word} {spec.arch_label}" if spec.arch_label else word)
            top.append(None)
        elif spec.kind == FIXED and spec.arch_label is None:
            bottom.append("in place")
            top.append("fix")
        else:
            bottom.append(spec.arch_label or "")
            top.append(None)
    widths = [
        max([len(bottom[k]), len(top[k] or "")] + [len(cells[k]) for _, _, cells in rows])
        for k in range(len(columns))
    ]
    spans = _spans(columns) if two_level else []
    for k0, k1, text in spans:  # make room for spanning labels wider than their columns
        room = sum(widths[k0 : k1 + 1]) + GAP * (k1 - k0)
        if room < len(text):
            widths[k1] += len(text) - room
    starts, x = [], case_x + cw + GAP
    for w in widths:
        starts.append(x)
        x += w + GAP
    lines = []
    if two_level and (spans or any(top)):
        line = ""
        for k0, k1, text in spans:
            x0, text = _span_place(starts, widths, bottom, k0, k1, text)
            line = _put(line, x0, text)
        for k, t in enumerate(top):
            if t:
                line = _put(line, starts[k] + widths[k] - len(t), t)
        lines.append(line)
    head = ""
    if label_headers:
        head = _put(head, indent, "fix") if gw else head
        head = _put(head, case_x, "case")
    for k, text in enumerate(bottom):
        head = _put(head, starts[k] + widths[k] - len(text), text)
    lines.append(head)
    for group, case, cells in rows:
        line = _put("", indent, group) if group else ""
        line = _put(line, case_x, case)
        for k, cell in enumerate(cells):
            line = _put(line, starts[k] + widths[k] - len(cell), cell)
        lines.append(line.rstrip())
    return [ln.rstrip() for ln in lines]


def _spans(columns: list[Spec]) -> list[tuple[int, int, str]]:
    """Runs of reverted columns (with an arch) get one `fix reverted` label over them."""
    out, k = [], 0
    while k < len(columns):
        if columns[k].kind == REVERTED:
            j = k
            while j + 1 < len(columns) and columns[j + 1].kind == REVERTED:
                j += 1
            out.append((k, j, "fix reverted"))
            k = j + 1
        else:
            k += 1
    return out


def _span_place(starts, widths, bottom, k0, k1, text) -> tuple[int, str]:
    """Where a spanning label goes: it must overlap the first and the last column's header
    label (both right-aligned), else it would read as the label of one column only. When it
    is too short for that, it is padded with dashes: `--- fix reverted ---`."""
    first_end = starts[k0] + widths[k0]
    last_start = starts[k1] + widths[k1] - len(bottom[k1])
    need = last_start - first_end + 2
    if k1 > k0 and len(text) < need:
        pad = need - len(text)
        text = "-" * (pad // 2 + 1) + " " + text + " " + "-" * (pad - pad // 2 + 1)
    lo_s, hi_e = starts[k0], starts[k1] + widths[k1]
    s = max(lo_s, lo_s + (hi_e - lo_s - len(text)) // 2)
    if k1 > k0:
        s = max(min(s, first_end - 1), last_start - len(text) + 1)
    return s, text


def _put(line: str, x: int, text: str) -> str:
    line = line.ljust(x)
    return line[:x] + text + line[x + len(text) :]


def render_markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max([len(h), 3] + [len(r[k]) for r in rows]) for k, h in enumerate(header)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    out.append("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for r in rows:
        out.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return out
