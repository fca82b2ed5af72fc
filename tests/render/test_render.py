"""Markdown, terminal and registry table rendering, including the comment size limit."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import partial

from helpers import registry

from ci_budget.budget.status import build_report
from ci_budget.config import Config
from ci_budget.models import (
    ArchCell,
    ArchRow,
    ClassTiming,
    FileResult,
    Problem,
    RegistryScan,
    RunResults,
)
from ci_budget.render.run_md import ACTION_ROWS, markdown
from ci_budget.render.text import registry_table, terminal
from ci_budget.render.words import bar

SUITE = "base-b-test-1-gpu-large"
reg = partial(registry.reg, line=3)


def cls(path, total):
    return ClassTiming(
        name=f"{path}::TestX", class_setup=10, tests=total - 12, class_teardown=2, total=total
    )


def small_report():
    regs = RegistryScan(
        registrations=[
            reg(f, 790.0) for f in ("t/over.py", "t/ok.py", "t/pipe|name.py", "t/to.py")
        ],
        errors=[Problem(file="t/ok.py", line=9, col=1, message="est_time must be positive")],
    )
    files = [
        FileResult(
            path="t/over.py", suite=SUITE, elapsed=900, status="passed",
            classes=[cls("t/over.py", 800)], unattributed=100,
        ),
        FileResult(path="t/ok.py", suite=SUITE, elapsed=500, status="passed"),
        FileResult(path="t/pipe|name.py", suite=SUITE, elapsed=700, status="passed"),
        FileResult(
            path="t/to.py", suite=SUITE, elapsed=1900, status="timeout", timeout=1900,
            in_flight="t/to.py::TestX::test_slow",
        ),
    ]  # fmt: skip
    report = build_report(regs, [RunResults(files=files)], Config())
    report.arch_rows = [
        ArchRow(
            file="t/over.py", line=40, group="fix-7", case="fp8 | gemm",
            reverted={"sm90": ArchCell(raw="1.25", values=[1.25]), "sm100": ArchCell(na=True)},
            flags=["sm100 not on CI"],
        ),
        ArchRow(file="t/over.py", line=41, case="unflagged row"),
    ]  # fmt: skip
    return report


def test_markdown_sections_and_order():
    md = markdown(small_report())
    lines = md.splitlines()
    assert lines[0] == "<!-- ci-budget:run -->"
    # the verdict names what needs action, worst first; the counts follow
    assert lines[1] == "## 🛑 ci-budget: 1 file timed out (`to.py`); 1 file over budget (`over.py`)"
    assert "1 timed out, 1 over budget, 1 near, 1 ok" in lines[3]
    # files that need action first, then the suite totals, then the rest folded
    # file names shortened to what tells them apart, after the verdict columns
    assert (
        md.index("`to.py`")
        < md.index("`over.py`")
        < md.index("### Suite totals")
        < md.index("<details><summary>🟡 Near budget (1)</summary>")
        < md.index("`ok.py`")
    )
    row = next(line for line in lines if "| `over.py` |" in line)
    assert row.startswith("| 🔴 over | 114% | 900s | 790s | est_time=1080 |")
    assert "| `TestX` | 10s | 788s | 2.0s | 800s | 89% |" in md
    assert "_unattributed: start-up, imports, collection_ | | | | 100s | 11% |" in md
    assert "Running when it was cut off: `t/to.py::TestX::test_slow`" in md
    assert "est_time>=2280" in md and "lower bound" in md
    assert "t/over.py: est_time=1080  # was 790, measured 900s" in md
    assert "### Suite totals" in md and "| base-b-test-1-gpu-large | 4 |" in md
    assert "### Registry problems" in md and "est_time must be positive" in md
    assert "### Architecture rows not verified on CI hardware" in md
    assert "sm90: 1.25; sm100: n/a" in md and "sm100 not on CI" in md
    assert "unflagged row" not in md
    assert "not shown" not in md


def test_markdown_escapes_pipes_in_cells():
    md = markdown(small_report())
    assert "| `pipe\\|name.py` |" in md
    assert "| fp8 \\| gemm |" in md
    for line in md.splitlines():
        if "| `pipe" in line:
            # an unescaped pipe would add a column (a folded row has six)
            assert len(re.findall(r"(?<!\\)\|", line)) == 7


def test_markdown_kind_marker():
    report = small_report()
    report.kind = "nightly"
    assert markdown(report).startswith("<!-- ci-budget:nightly -->\n")


def test_bar():
    assert bar(0.92) == "█████████░"
    assert bar(1.5) == "██████████"
    assert bar(0.0) == "░░░░░░░░░░"
    assert bar(None) == "░░░░░░░░░░"


def big_report(n=5000, over_every=17):
    regs, files = [], []
    for i in range(n):
        path = f"test/registered/area{i % 41}/test_case_{i:05d}.py"
        regs.append(reg(path, 100.0))
        if i % over_every == 0:
            elapsed = 150.0
        elif i % 5 == 0:
            elapsed = 90.0
        else:
            elapsed = 60.0
        status = "timeout" if i % 997 == 1 else "failed" if i % 1201 == 2 else "passed"
        files.append(
            FileResult(
                path=path, suite=SUITE, elapsed=elapsed, status=status,
                classes=[cls(path, elapsed - 4)], unattributed=4,
            )
        )  # fmt: skip
    return build_report(regs, [RunResults(files=files)], Config())


def test_markdown_limit_with_5000_files_keeps_every_overrun():
    report = big_report()
    attention = [line for line in report.lines if line.status in ("over", "timeout", "failed")]
    assert 300 < len(attention) < 400
    md = markdown(report)
    assert len(md) <= 65536
    for line in attention:  # unique names: the file name alone tells them apart
        assert f"| `{line.file.rsplit('/', 1)[1]}` |" in md
    ok = sum(line.status == "ok" for line in report.lines)
    assert f"{ok:,} ok files not shown" in md
    assert "per-class breakdowns not shown" in md
    assert "### Suite totals" in md


def test_markdown_compact_form_when_even_overruns_do_not_fit():
    report = big_report(n=3000, over_every=2)  # ~1,500 over lines
    md = markdown(report)
    assert len(md) <= 65536
    over = [line for line in report.lines if line.status in ("over", "timeout", "failed")]
    first, rest = md.split("### Suite totals")
    rows = sum(first.count(f"| {s} |") for s in ("⏱️ timeout", "❌ failed", "🔴 over"))
    assert rows == ACTION_ROWS  # the first screen keeps its table
    more = rest.split("### Everything else")[0]
    assert "| Status | Used |" not in more  # the others turned into a list
    shown = ACTION_ROWS + sum(f"`{line.file}` (" in more for line in over)
    if shown < len(over):
        assert f"{len(over) - shown:,} more over/timeout/failed files" in md
    assert shown > 500


def test_markdown_tiny_limit_is_still_respected():
    md = markdown(small_report(), limit=300)
    assert len(md) <= 300
    assert md.startswith("<!-- ci-budget:run -->")


def test_terminal_is_aligned_text():
    text = terminal(small_report())
    lines = text.splitlines()
    assert (
        lines[0]
        == "FAILING ci-budget (run): 1 file timed out (t/to.py); 1 file over budget (t/over.py)"
    )
    assert lines[1].startswith("1 timed out, 1 over budget, 1 near, 1 ok — ")
    header = next(line for line in lines if line.startswith("STATUS"))
    rows = [line for line in lines if line.startswith(("timeout ", "over ", "near ", "ok "))]
    assert len(rows) == 4
    assert {row.index("t/") for row in rows} == {header.index("FILE")}
    assert "running when cut off: t/to.py::TestX::test_slow" in text
    assert "(unattributed)" in text
    assert "Architecture rows not verified on CI hardware:" in text
    assert "error: t/ok.py:9:1: est_time must be positive" in text


def test_registry_table_groups_by_suite():
    regs = [
        reg("t/a.py", 100.0),
        reg("t/b.py", 300.0, nightly=True),
        reg("t/c.py", 50.0, disabled="flaky on H100"),
        reg("t/d.py", 20.0, suite="legacy-suite"),
    ]
    text = registry_table(regs)
    lines = text.splitlines()
    assert lines[0] == f"{SUITE}  3 files, 1 disabled  400s"
    assert lines[1].split() == ["300s", "cuda", "t/b.py", "[nightly]"]
    assert lines[3].split()[:3] == ["50s", "cuda", "t/c.py"]
    assert lines[3].endswith("[disabled: flaky on H100]")
    assert "legacy-suite  1 file  20s" in lines
    assert lines[-1] == "4 files in 2 suites, 420s enabled budget"
    assert registry_table([]) == "no registered files\n"


SCAN_FILE = """\
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")

if __name__ == "__main__":
    print("run")
"""


def test_scan_command_prints_the_table(tmp_path):
    tests = tmp_path / "test" / "registered"
    tests.mkdir(parents=True)
    (tests / "test_one.py").write_text(SCAN_FILE.format(est=790))
    (tests / "test_two.py").write_text(SCAN_FILE.format(est=60))
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{SUITE}  2 files  850s"
    assert lines[1].split() == ["790s", "cuda", "test/registered/test_one.py"]
    assert lines[2].split() == ["60s", "cuda", "test/registered/test_two.py"]


def test_a_folded_part_cut_to_nothing_still_closes_its_fold():
    from ci_budget.render.blocks import Part, fit_parts, join

    rows = [f"| row {i} |\n" for i in range(100)]
    folded = Part("\n<details><summary>ok</summary>\n\n", "| a |\n|---|\n", rows, priority=1,
                  noun="ok files", close="\n</details>\n")  # fmt: skip
    top = "# top\n"
    assert fit_parts(top, [folded], 200) <= 200
    text = join(top, [folded], 200)
    assert text.count("<details>") == text.count("</details>") == 1
    assert "ok files not shown" in text
    # fitting again counts the part as already cut, not at its full size
    assert fit_parts(top, [folded], 200) == len(text)
