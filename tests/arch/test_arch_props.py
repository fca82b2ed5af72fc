"""Property tests: rendered tables parse back to the same rows; garbage never crashes."""

from __future__ import annotations

import string

from helpers.arch_render import Spec, render_fixed, render_markdown
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_budget.arch.docstrings import parse_source
from ci_budget.arch.fill import set_cell
from ci_budget.arch.layout import FIXED, NA_WORDS, REVERTED, ArchTableError
from ci_budget.arch.table import parse_tables
from ci_budget.config import Config

AMAP = Config().gpu_arch_map()
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARCH_LABELS = {
    "sm90": ["SM90 (H200)", "sm_90", "H100", "SM90"],
    "sm100": ["SM100 (B200)", "B300", "sm100", "GB200"],
    "sm120": ["sm_120", "RTX 5090"],
    "sm80": ["SM80 (A100)"],
}

word = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda w: w not in NA_WORDS)
case = st.lists(word, min_size=1, max_size=3).map(" ".join)
group = st.one_of(st.none(), st.integers(1, 999999).map(lambda n: f"#{n}"))
number = st.one_of(
    st.just("0"),
    st.just("0.0"),
    st.floats(1e-12, 1e6).map(lambda x: f"{x:.2e}"),
    st.floats(1e-6, 1e3).map(lambda x: f"{x:g}"),
    st.floats(-1e3, 1e3).map(lambda x: f"{x:.3E}"),
    st.integers(1, 99).map(lambda n: f".{n}"),
)
cell = st.one_of(number, st.sampled_from(["n/a", "-", ""]), st.tuples(number, number).map("/".join))


@st.composite
def tables(draw):
    archs = draw(
        st.lists(st.sampled_from(sorted(ARCH_LABELS)), min_size=1, max_size=3, unique=True)
    )
    labels = [draw(st.sampled_from(ARCH_LABELS[a])) for a in archs]
    has_fixed = draw(st.booleans())
    specs = [Spec(REVERTED, lab) for lab in labels] + ([Spec(FIXED)] if has_fixed else [])
    n = draw(st.integers(1, 6))
    rows = []
    for i in range(n):
        cells = draw(st.lists(cell, min_size=len(specs), max_size=len(specs)))
        if i == 0 and not any(cells):
            cells[0] = "0.0"  # a first row without any value reads as header text
        rows.append((draw(group), draw(case), cells))
    return archs, specs, rows


def expected(archs, specs, rows):
    out, carried = [], None
    for g, c, cells in rows:
        carried = g or carried
        rev = {a: cells[k] for k, a in enumerate(archs)}
        fixed = cells[len(archs)] if len(specs) > len(archs) else None
        out.append((carried, c, rev, fixed))
    return out


def got(rows):
    return [
        (
            r.group,
            r.case,
            {a: c.raw for a, c in r.reverted.items()},
            r.fixed.raw if r.fixed else None,
        )
        for r in rows
    ]


def as_module(lines: list[str]) -> str:
    return '"""Guard.\n\n' + "\n".join(lines) + '\n\nMore prose.\n"""\n'


@SETTINGS
@given(tables(), st.booleans(), st.booleans(), st.integers(0, 6))
def test_fixed_width_render_parse(table, two_level, label_headers, indent):
    archs, specs, rows = table
    lines = render_fixed(
        specs, rows, indent=indent, two_level=two_level, label_headers=label_headers
    )
    parsed, problems, _ = parse_source(as_module(lines), "t.py", AMAP)
    assert problems == [], "\n".join(lines)
    assert got(parsed) == expected(archs, specs, rows), "\n".join(lines)
    first_row = 3 + len(lines) - len(rows)
    assert [r.line for r in parsed] == list(range(first_row, first_row + len(rows)))


@SETTINGS
@given(tables())
def test_markdown_render_parse(table):
    archs, specs, rows = table
    header = ["fix", "case"] + [
        f"reverted {s.arch_label}" if s.kind == REVERTED else "fixed" for s in specs
    ]
    body = [[g or "", c, *cells] for g, c, cells in rows]
    lines = render_markdown(header, body)
    parsed, problems, _ = parse_source(as_module(lines), "t.py", AMAP)
    assert problems == [] and got(parsed) == expected(archs, specs, rows), "\n".join(lines)


@SETTINGS
@given(tables(), st.data())
def test_fill_round_trip(table, data):
    archs, specs, rows = table
    lines = render_fixed(specs, rows, two_level=data.draw(st.booleans()))
    (parsed,) = parse_tables("\n".join(lines), AMAP)
    row = data.draw(st.sampled_from(parsed.rows))
    col = data.draw(st.sampled_from([i for i, c in enumerate(parsed.columns) if c.measured]))
    value = data.draw(number)
    new = set_cell(lines, parsed, row.index, col, value, AMAP)
    (again,) = parse_tables("\n".join(new), AMAP)
    assert again.problems == []
    for before, after in zip(parsed.rows, again.rows, strict=True):
        raws = {c: raw for c, (_, _, raw) in after.cells.items()}
        want = {c: raw for c, (_, _, raw) in before.cells.items()}
        if before.index == row.index:
            want[col] = value
        assert (after.group, after.case, raws) == (before.group, before.case, want)
    changed = [i for i, (a, b) in enumerate(zip(lines, new, strict=True)) if a != b]
    widened = any(len(new[i]) > len(lines[i]) for i in changed if i != row.index)
    assert widened or changed in ([], [row.index])


garbage_line = st.lists(
    st.one_of(
        st.sampled_from(["SM90", "sm_100", "H200", "(B200)", "RTX 5090", "fix", "reverted",
                         "in place", "fixed", "n/a", "-", "|", "---", "#12", "0.0", "1e-9/2"]),
        number,
        word,
        st.text(string.printable, max_size=6),
    ),
    max_size=8,
).map(lambda parts: "".join(p + " " * (len(p) % 3 + 1) for p in parts))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(garbage_line, max_size=8).map("\n".join)))
def test_garbage_never_crashes(text):
    try:
        tables = parse_tables(text, AMAP)
        rows, problems, _ = parse_source(repr(text) + "\n", "t.py", AMAP)
    except ArchTableError:
        return
    assert all(isinstance(t.problems, list) for t in tables)
    assert all(p.file == "t.py" for p in problems)
    assert all(r.case for r in rows)
