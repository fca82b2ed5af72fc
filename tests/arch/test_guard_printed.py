"""Values read from what guards print, matched to table rows by the documented rule.

The acceptance case: a copy of sglang's guard file (its docstring, class and test names; the
server and KL helpers replaced by a stand-in printing the docstring's numbers the way sglang's
helpers print them) gets every row filled by `guard fill --fill-from`, with one config line.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from ci_budget.arch.docstrings import parse_source
from ci_budget.cli import main
from ci_budget.config import Config
from ci_budget.results.printed import from_json_report, from_log, from_reportlog, value_regex

FIXTURES = Path(__file__).parents[1] / "fixtures"
SGLANG = FIXTURES / "arch" / "test_unified_radix_cache_kl_hybrid_bitexact.py"
REL = (
    "test/registered/radix_cache/unified_radix_tree/test_unified_radix_cache_kl_hybrid_bitexact.py"
)
MAPPING = (
    'arch.rows = { "multiturn branching" = '
    '"TestUnifiedHybridHiCacheBitExact::test_multiturn_decode_cache_hit_branching" }\n'
)
RX = value_regex("avg_kl_div=<number>")


def standin_repo(tmp_path: Path, config: str = MAPPING) -> Path:
    """sglang's guard docstring over the stand-in classes, in an sglang-shaped tree."""
    source = SGLANG.read_text()
    doc_end = ast.parse(source).body[0].end_lineno
    docstring = "\n".join(source.split("\n")[:doc_end]) + "\n"
    code = (FIXTURES / "guard" / "standin_classes.py.txt").read_text()
    root = tmp_path / "repo"
    (root / REL).parent.mkdir(parents=True)
    (root / REL).write_text(docstring + code)
    shutil.copy(FIXTURES / "guard" / "kl_standin.py", (root / REL).parent)
    (root / "ci-budget.toml").write_text(config)
    return root


def cells(root: Path) -> dict[tuple[str, str], tuple[str, str, str]]:
    rows, problems, _ = parse_source((root / REL).read_text(), REL, Config().gpu_arch_map())
    assert problems == []
    return {
        (r.group, r.case): (r.reverted["sm100"].raw, r.reverted["sm90"].raw, r.fixed.raw)
        for r in rows
    }


def fill(root, results, arch, *extra) -> int:
    argv = ["guard", "fill", "--root", str(root), str(root / REL), "--fill-from", str(results)]
    return main([*argv, "--arch", arch, "--write", *extra])


@pytest.mark.slow
def test_every_row_of_sglangs_guard_fills_from_printed_values(tmp_path, monkeypatch, capsys):
    root = standin_repo(tmp_path)
    before = cells(root)
    runs = [("34184", "sm90", "#34184"), ("29792", "sm90", "#29792"), ("29792", "sm100", "#29792")]
    for state, arch, group in runs:
        out = tmp_path / f"{state}-{arch}.json"
        monkeypatch.setenv("STANDIN_STATE", state)
        monkeypatch.setenv("STANDIN_ARCH", arch)
        assert main(["run", "--root", str(root), REL, "--out", str(out)]) == 1  # guards red
        capsys.readouterr()
        assert fill(root, out, arch, "--reverted", "--group", group) == 0
        listing = capsys.readouterr().err
        # Lazy and MTP inherit or repeat tests that have no row of their own: listed, not guessed
        assert "TestUnifiedHybridMTPBitExact::test_logprobs_match: value 0.0 matches no row" in (
            listing
        )
    monkeypatch.setenv("STANDIN_STATE", "fixed")
    out = tmp_path / "fixed.json"
    assert main(["run", "--root", str(root), REL, "--out", str(out)]) == 0
    assert fill(root, out, "sm90") == 0
    after = cells(root)
    assert after[("#34184", "lazy test_prefill_cache_hit")] == ("5.56e-06", "3.90e-06", "0.0")
    assert after[("#34184", "test_prefill_cache_hit")] == ("6.22e-06", "4.40e-06", "0.0")
    assert after[("#34184", "multiturn branching")] == ("0.0", "2.01e-07", "0.0")
    assert after[("#29792", "multiturn branching")] == ("1.16e-05", "5.14e-04", "0.0")
    for key, (sm100, sm90, fixed) in after.items():  # every SM90 cell written from a print
        assert sm90 != "n/a" and fixed == "0.0", key
        assert sm100 == before[key][0] or key[0] == "#29792", key  # untouched where not run
    assert before[("#34184", "lazy test_prefill_cache_hit")][1] == "n/a"


def test_without_the_mapping_the_multiturn_rows_are_listed(tmp_path, monkeypatch, capsys):
    root = standin_repo(tmp_path, config="")
    monkeypatch.setenv("STANDIN_STATE", "34184")
    out = tmp_path / "r.json"
    assert main(["run", "--root", str(root), REL, "--out", str(out)]) == 1
    capsys.readouterr()
    assert fill(root, out, "sm90", "--reverted", "--group", "#34184") == 0
    err = capsys.readouterr().err
    assert (
        "TestUnifiedHybridHiCacheBitExact::test_multiturn_decode_cache_hit_branching: "
        "value 2.01e-07 matches no row" in err
    )
    assert cells(root)[("#34184", "multiturn branching")][1] == "2.01e-07"  # as written before


def test_a_value_under_two_fixes_needs_group(tmp_path, monkeypatch, capsys):
    root = standin_repo(tmp_path)
    monkeypatch.setenv("STANDIN_STATE", "29792")
    out = tmp_path / "r.json"
    assert main(["run", "--root", str(root), REL, "--out", str(out)]) == 1
    capsys.readouterr()
    before = cells(root)
    fill(root, out, "sm90", "--reverted")
    err = capsys.readouterr().err
    assert "its rows sit under #29792, #34184; name one with --group" in err
    after = cells(root)
    for key in [("#34184", "multiturn branching"), ("#29792", "multiturn branching")]:
        assert after[key] == before[key]


def test_script_mode_reads_the_files_output(tmp_path, monkeypatch):
    root = standin_repo(tmp_path)
    monkeypatch.setenv("STANDIN_STATE", "34184")
    monkeypatch.setenv("STANDIN_ARCH", "sm90")
    out = tmp_path / "r.json"
    argv = ["run", "--root", str(root), REL, "--out", str(out), "--mode", "script"]
    (root / "ci-budget.toml").write_text(MAPPING + 'script-cwd = "test"\n')
    assert main(argv) == 1
    printed = json.loads(out.read_text())["files"][0]["printed"]
    # unittest -f stops at the first failure: TestUnifiedHybridBitExact::test_logprobs_match
    # passes on SM90, test_prefill_cache_hit fails; the failure report is nobody's value
    key = f"{REL}::TestUnifiedHybridBitExact::test_prefill_cache_hit"
    assert printed[key] == ["avg_kl_div=4.4e-06"]
    assert printed[f"{REL}::TestUnifiedHybridBitExact::test_decode_cache_hit"] == ["avg_kl_div=0.0"]


def test_capture_off_reads_the_files_output_by_marker(tmp_path, monkeypatch):
    root = standin_repo(tmp_path)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -s\n")
    monkeypatch.setenv("STANDIN_STATE", "34184")
    out = tmp_path / "r.json"
    assert main(["run", "--root", str(root), REL, "--out", str(out)]) == 1
    printed = json.loads(out.read_text())["files"][0]["printed"]
    assert printed[f"{REL}::TestUnifiedHybridLazyBitExact::test_prefill_cache_hit"] == [
        "avg_kl_div=3.9e-06"
    ]


def test_sources_of_printed_values():
    report = {
        "tests": [
            {"nodeid": "f.py::T::test_a", "call": {"stdout": "kl_divs=[1.0]\navg_kl_div=1.0\n"}},
            {"nodeid": "f.py::T::test_b", "call": {"outcome": "passed"}},
            {"nodeid": "f.py::T::test_c"},
        ]
    }
    assert from_json_report(report, RX) == {"f.py::T::test_a": ["avg_kl_div=1.0"]}
    entries = [
        {"$report_type": "TestReport", "nodeid": "f.py::T::test_a", "when": "call",
         "sections": [["Captured stdout setup", "avg_kl_div=9"],
                      ["Captured stdout call", "avg_kl_div=2e-06 ok\navg_kl_div=3e-06"]]},
        {"$report_type": "TestReport", "nodeid": "f.py::T::test_a", "when": "teardown",
         "sections": [["Captured stdout call", "avg_kl_div=2e-06"]]},
    ]  # fmt: skip
    assert from_reportlog(entries, RX) == {
        "f.py::T::test_a": ["avg_kl_div=2e-06", "avg_kl_div=3e-06"]
    }
    log = [
        "avg_kl_div=5",  # before any test: nobody's
        "[CI Test Method] TestX.test_a",
        "avg_kl_div=1e-06",
        "[ci-budget test] f.py::TestY::test_b",
        "my_avg_kl_div=7 avg_kl_div=nan",
        "=" * 70,
        "AssertionError: avg_kl_div=1e-06 > threshold=1e-09",
    ]
    assert from_log(log, "f.py", RX) == {
        "f.py::TestX::test_a": ["avg_kl_div=1e-06"],
        "f.py::TestY::test_b": ["avg_kl_div=nan"],
    }
