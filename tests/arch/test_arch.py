"""Measured tables in guard docstrings: parsing, line numbers, flags, run values."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_budget.arch.docstrings import (
    FIXED_NONZERO,
    NO_COLUMN,
    SILENT,
    SILENT_ALL,
    UNVERIFIED,
    arch_mismatch,
    flag_rows,
    parse_source,
    prose_arch,
)
from ci_budget.arch.layout import normalize_arch, parse_cell
from ci_budget.arch.match import attach_measured, match_row
from ci_budget.config import Config
from ci_budget.models import (
    ArchRow,
    ClassTiming,
    FileResult,
    GpuInfo,
    RunMeta,
    RunResults,
)
from ci_budget.models import TestTiming as Timing
from ci_budget.workspace.files import guard_files

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arch"
SGLANG = "test_unified_radix_cache_kl_hybrid_bitexact.py"
AMAP = Config().gpu_arch_map()


def parse(source: str, rel: str = "t.py", ci: str | None = "sm90"):
    rows, problems, _ = parse_source(source, rel, AMAP)
    return flag_rows(rows, ci), problems


def cells(row: ArchRow) -> dict[str, str]:
    return {a: c.raw for a, c in row.reverted.items()}


def test_sglang_golden():
    rows, problems = guard_files(FIXTURES, [SGLANG], Config())[:2]
    assert problems == []
    got = [
        (r.line, r.table_line, r.group, r.case, cells(r), r.fixed.raw, r.ci_arch, r.flags)
        for r in rows
    ]
    assert got == [
        (18, 16, "#34184", "test_logprobs_match",
         {"sm100": "5.58e-07", "sm90": "0.0"}, "0.0", "sm90", [SILENT]),
        (19, 16, "#34184", "test_prefill_cache_hit",
         {"sm100": "6.22e-06", "sm90": "4.40e-06"}, "0.0", "sm90", []),
        (20, 16, "#34184", "test_decode_cache_hit",
         {"sm100": "0.0", "sm90": "0.0"}, "0.0", "sm90", [SILENT_ALL]),
        (21, 16, "#34184", "multiturn branching",
         {"sm100": "0.0", "sm90": "2.01e-07"}, "0.0", "sm90", []),
        (22, 16, "#34184", "lazy test_prefill_cache_hit",
         {"sm100": "5.56e-06", "sm90": "n/a"}, "0.0", "sm90", [UNVERIFIED]),
        (23, 16, "#29792", "multiturn branching",
         {"sm100": "9.43e-06/1.16e-05", "sm90": "5.14e-04"}, "0.0", "sm90", []),
    ]  # fmt: skip
    assert rows[5].reverted["sm100"].values == [9.43e-06, 1.16e-05]
    assert rows[4].reverted["sm90"].na and rows[4].reverted["sm90"].values == []
    source = (FIXTURES / SGLANG).read_text().split("\n")
    for r in rows:  # the reported line is the row's line in the file
        assert r.case in source[r.line - 1]
    assert "fix reverted" in source[rows[0].table_line - 1]


def test_ci_arch_from_prose_hint_when_unregistered(tmp_path):
    doc = (FIXTURES / SGLANG).read_text().split('"""')[1]
    (tmp_path / "t.py").write_text(f'"""{doc}"""\n')
    rows, _ = guard_files(tmp_path, ["t.py"], Config())[:2]
    assert {r.ci_arch for r in rows} == {"sm90"}
    assert prose_arch("CI runs `4-gpu-b200` nightly.", Config()) == "sm100"
    assert prose_arch("CI runs `1-gpu-large`, which is SM100.", Config()) == "sm100"
    assert prose_arch("no hint here", Config()) is None


def test_explicit_ci_arch_overrides_and_missing_column(tmp_path):
    (tmp_path / SGLANG).write_text((FIXTURES / SGLANG).read_text())
    rows, _ = guard_files(tmp_path, [SGLANG], Config(), "B200")[:2]
    assert rows[0].ci_arch == "sm100" and rows[0].flags == []
    assert rows[2].flags == [SILENT_ALL]
    rows, _ = guard_files(tmp_path, [SGLANG], Config(), "sm120")[:2]
    assert all(NO_COLUMN in r.flags for r in rows)


@pytest.mark.parametrize(
    "name,arch",
    [("SM90", "sm90"), ("sm_90", "sm90"), ("sm90a", "sm90"), ("SM 100", "sm100"),
     ("H200", "sm90"), ("(B200)", "sm100"), ("GB300", "sm100"), ("RTX 5090", "sm120"),
     ("rtx  5090", "sm120"), ("MI300X", "gfx942"), ("fix", None), ("", None)],
)  # fmt: skip
def test_normalize_arch(name, arch):
    assert normalize_arch(name, AMAP) == arch


@pytest.mark.parametrize(
    "raw,values,na",
    [("0", [0.0], False), ("0.0", [0.0], False), ("1e-9", [1e-9], False),
     ("5.58e-07", [5.58e-07], False), ("1.2E+3", [1200.0], False), (".5", [0.5], False),
     ("9.43e-06/1.16e-05", [9.43e-06, 1.16e-05], False), ("n/a", [], True), ("N/A", [], True),
     ("-", [], True), ("", [], True)],
)  # fmt: skip
def test_parse_cell(raw, values, na):
    cell = parse_cell(raw)
    assert cell.values == values and cell.na is na
    assert parse_cell("fires") is None and parse_cell("1e-9/x") is None


VARIANT = '''"""Guard.

      case                 reverted sm_90   reverted GB200   fixed
  #1  test_a                           -             1e-9       0
      test with spaces                          1.2E+3/.5     0.0
  #2  test_b                        0.0                       0.5
"""
'''


def test_single_line_header_sm_spelling_dash_and_empty_cells():
    rows, problems = parse(VARIANT)
    assert problems == []
    assert [(r.line, r.group, r.case) for r in rows] == [
        (4, "#1", "test_a"),
        (5, "#1", "test with spaces"),
        (6, "#2", "test_b"),
    ]
    assert cells(rows[0]) == {"sm90": "-", "sm100": "1e-9"}
    assert rows[1].reverted["sm90"].na and rows[1].reverted["sm90"].raw == ""
    assert rows[1].reverted["sm100"].values == [1200.0, 0.5]
    assert rows[0].flags == [UNVERIFIED] and rows[1].flags == [UNVERIFIED]
    assert rows[2].reverted["sm100"].na and FIXED_NONZERO in rows[2].flags


CLASS_AND_TWO = '''"""No table here, just SM90 and SM100 in prose, and 1.5e-3 in  a number."""


class TestGuard:
    """Two tables.

    case         SM100   SM90
    test_x         0.0    0.0

                 H200 reverted   fixed
    test_y                 3.0     0.0
    test_z                 0.0     0.0
    """
'''


def test_class_docstring_and_two_tables():
    rows, problems = parse(CLASS_AND_TWO)
    assert problems == []
    assert [(r.case, r.line, r.table_line) for r in rows] == [
        ("test_x", 8, 7),
        ("test_y", 11, 10),
        ("test_z", 12, 10),
    ]
    assert cells(rows[0]) == {"sm100": "0.0", "sm90": "0.0"} and rows[0].fixed is None
    assert rows[0].flags == [SILENT_ALL]
    assert cells(rows[1]) == {"sm90": "3.0"} and rows[1].flags == []
    assert rows[2].flags == [SILENT_ALL]


GARBLED = '''"""Guard.

                     fix reverted       fix
                    SM100     SM90   in place
  test_a              1.0      0.0        0.0
  test_b              1.0      0.0                      7.0
  test_c              abc      0.0        0.0
  test_d              1.0      0.0        0.0
"""
'''


def test_garbled_rows_are_problems_with_lines():
    rows, problems = parse(GARBLED)
    assert [r.case for r in rows] == ["test_a", "test_d"]
    assert [(p.line, p.message) for p in problems] == [
        (6, "value '7.0' at column 57 is outside every column"),
        (7, "cell 'abc' under 'fix reverted SM100' is not a number, a/b, n/a or -"),
    ]
    assert all(p.file == "t.py" for p in problems)


def test_prose_and_syntax_errors():
    rows, problems = parse('"""CI runs on SM90.\n\nMeasured 1.0  2.0 on H100 and\nmore."""\n')
    assert rows == [] and problems == []
    rows, problems = parse("def f(:\n")
    assert rows == [] and problems[0].message.startswith("cannot parse")


MARKDOWN = '''"""Guard.

| fix | case | reverted sm100 | reverted sm90 | fixed |
|-----|------|---------------:|--------------:|------:|
| #34184 | test_logprobs_match | 5.58e-07 | 0.0 | 0.0 |
|  | lazy test_prefill_cache_hit | 5.56e-06 | n/a | 0.0 |
| #29792 | multiturn branching | 9.43e-06/1.16e-05 | 5.14e-04 | 0.0 |
| #1 | bad | x | 0.0 | 0.0 |
"""
'''


def test_markdown_table():
    rows, problems = parse(MARKDOWN)
    assert [(r.line, r.group, r.case, cells(r), r.fixed.raw, r.flags) for r in rows] == [
        (5, "#34184", "test_logprobs_match", {"sm100": "5.58e-07", "sm90": "0.0"}, "0.0",
         [SILENT]),
        (6, "#34184", "lazy test_prefill_cache_hit", {"sm100": "5.56e-06", "sm90": "n/a"},
         "0.0", [UNVERIFIED]),
        (7, "#29792", "multiturn branching", {"sm100": "9.43e-06/1.16e-05", "sm90": "5.14e-04"},
         "0.0", []),
    ]  # fmt: skip
    assert [(p.line, p.message) for p in problems] == [
        (8, "cell 'x' under 'reverted sm100' is not a number, a/b, n/a or -")
    ]


def _results(arch: str | None, cases: list[tuple[str, dict]], path: str = "") -> RunResults:
    path = path or f"test/registered/{SGLANG}"
    classes: dict[str, ClassTiming] = {}
    for nodeid, props in cases:
        cls = nodeid.rsplit("::", 1)[0]
        classes.setdefault(cls, ClassTiming(name=cls)).test_cases.append(
            Timing(nodeid=nodeid, user_properties=props)
        )
    gpu = GpuInfo(name="NVIDIA H200", arch=arch) if arch else None
    return RunResults(
        meta=RunMeta(gpu=gpu), files=[FileResult(path=path, classes=list(classes.values()))]
    )


def test_attach_measured_by_the_rule_and_explicit_case():
    rows, _ = guard_files(FIXTURES, [SGLANG], Config())[:2]
    p = f"test/registered/{SGLANG}"
    res = _results(
        "sm90",
        [
            (f"{p}::TestKLLazy::test_prefill_cache_hit", {"avg_kl_div": 1.5e-06}),
            (f"{p}::TestKL::test_prefill_cache_hit", {"avg_kl_div": 2.5e-06}),
            (f"{p}::TestKL::test_logprobs_match[x]", {"avg_kl_div": "0.0"}),
            (f"{p}::TestKL::test_multiturn_branching", {"avg_kl_div": 3.0}),  # no such row
            (f"{p}::TestKL::test_other", {"avg_kl_div": 4.0, "kl_case": "#29792 multiturn branching"}),
            (f"{p}::TestKL::test_decode_cache_hit", {"avg_kl_div": "oops"}),
        ],
    )  # fmt: skip
    problems = []
    matching = attach_measured(rows, [res], problems=problems)
    got = {(r.group, r.case): r.measured for r in rows}
    assert got[("#34184", "lazy test_prefill_cache_hit")] == {"sm90": 1.5e-06}
    assert got[("#34184", "test_prefill_cache_hit")] == {"sm90": 2.5e-06}
    assert got[("#34184", "test_logprobs_match")] == {"sm90": 0.0}
    assert got[("#29792", "multiturn branching")] == {"sm90": 4.0}
    assert got[("#34184", "multiturn branching")] == {}  # never guessed from the words
    assert got[("#34184", "test_decode_cache_hit")] == {}
    assert [m.nodeid.rsplit("::", 1)[1] for m in matching.unmatched] == ["test_multiturn_branching"]
    messages = [p.message for p in problems]
    assert any("avg_kl_div is not a number" in m for m in messages)
    assert any("test_multiturn_branching: value 3.0 matches no row" in m for m in messages)
    problems = []
    attach_measured(rows, [_results(None, [])], problems=problems)
    assert "no detected GPU arch" in problems[0].message


def test_match_row_rule_mapping_and_case():
    rows = [ArchRow(file="f", line=1, case=c) for c in ("lazy test_x", "test_x", "chunked")]
    classes = {"TestEager", "TestEagerLazy", "TestOther"}
    assert [r.case for r in match_row(rows, "f::TestEagerLazy::test_x", None, classes)] == [
        "lazy test_x"
    ]
    assert [r.case for r in match_row(rows, "f::TestEager::test_x", None, classes)] == ["test_x"]
    assert match_row(rows, "f::T::test_chunked_prefill") == []  # words alone never match
    mapping = {"chunked": "T::test_chunked_prefill"}
    assert [r.case for r in match_row(rows, "f::T::test_chunked_prefill", mapping=mapping)] == [
        "chunked"
    ]
    assert match_row(rows, "g::T::test_chunked_prefill", mapping={"chunked": "f::T::test_y"}) == []
    assert [r.case for r in match_row(rows, "f::T::test_y", "Test_X")] == ["test_x"]


def test_a_parametrized_test_with_double_colons_in_its_id_measures_its_row():
    """`[a::b]` parameters are not class or test names: the row is the test function's."""
    rows = [ArchRow(file="t.py", line=1, case=c) for c in ("test_case", "lazy test_case")]
    classes = {"TestKL", "TestKLLazy"}
    found = match_row(rows, "t.py::TestKL::test_case[a::b]", None, classes)
    assert [r.case for r in found] == ["test_case"]
    found = match_row(rows, "t.py::TestKLLazy::test_case[x::y/z]", None, classes)
    assert [r.case for r in found] == ["lazy test_case"]
    mapping = {"test_case": "TestKL::test_case"}
    assert [r.case for r in match_row(rows, "t.py::TestKL::test_case[a::b]", mapping=mapping)] == [
        "test_case"
    ]


def test_a_row_two_tests_claim_is_listed_not_filled():
    rows = [ArchRow(file="f.py", line=1, case="test_x")]
    res = _results("sm90", [("f.py::TestA::test_x", {"avg_kl_div": 1.0}),
                            ("f.py::TestB::test_x", {"avg_kl_div": 2.0})], "f.py")  # fmt: skip
    problems = []
    matching = attach_measured(rows, [res], problems=problems)
    assert rows[0].measured == {} and len(matching.claimed_twice) == 1
    assert "row 'test_x' is claimed by f.py::TestA::test_x, f.py::TestB::test_x" in str(problems)


def test_arch_mismatch():
    meta = RunMeta(runner_config="1-gpu-large", configured_arch="sm90",
                   gpu=GpuInfo(name="NVIDIA B200", arch="sm_100"))  # fmt: skip
    problem = arch_mismatch(meta)
    assert problem is not None and "sm90" in problem.message and "sm100" in problem.message
    assert problem.file == "1-gpu-large"
    meta.gpu.arch = "SM90"
    assert arch_mismatch(meta) is None
    assert arch_mismatch(RunMeta(configured_arch="sm90")) is None


def test_markdown_fill_changes_only_that_cell():
    from ci_budget.arch.fill import fill_source

    rows, _, _ = parse_source(MARKDOWN, "t.py", AMAP)
    rows[1].measured["sm90"] = 1.5e-06
    new, touched, problems = fill_source(MARKDOWN, "t.py", rows, "sm90", True, AMAP)
    assert problems == [] and [line for line, _ in touched] == [3]
    old_lines, new_lines = MARKDOWN.split("\n"), new.split("\n")
    assert [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b] == [5]
    again, _, _ = parse_source(new, "t.py", AMAP)
    assert (
        again[1].reverted["sm90"].values == [1.5e-06]
        and again[1].reverted["sm100"].raw == "5.56e-06"
    )
