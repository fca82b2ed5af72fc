"""The example comments rendered as GitHub renders them, in headless Chromium at 1,012 px: no
essential column (status, use, change, risk, flags) is past the right edge. Element positions,
not pixels; Mermaid stays code here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import comment_page  # noqa: E402

from ci_budget.render import diff_md, run_md  # noqa: E402
from ci_budget.render.blocks import short_names  # noqa: E402
from tests.render.test_mermaid import _run_report, _static_report  # noqa: E402

ESSENTIAL = {
    "Status", "Used", "Measured", "Budget", "Suggestion", "Flags", "Case", "Total", "Share",
    "risk", "predicted makespan vs stage timeout", "est_time change", "flags", "error",
}  # fmt: skip
BLOB = "https://github.com/OWNER/REPO/blob/" + "a" * 40


def _chromium_or_skip():
    if comment_page.chromium():
        return
    if os.environ.get("CI_BUDGET_REQUIRE_BROWSER"):  # set by .ci/run, which installs chromium
        pytest.fail("chromium is required (apt-get install chromium)")
    pytest.skip("needs chromium")


def _check(markdown: str) -> int:
    layout = comment_page.layout(markdown)
    edge = layout["right"] + 0.5
    checked = 0
    for table in layout["tables"]:
        columns = [i for i, name in enumerate(table["head"]) if name in ESSENTIAL]
        for row in table["right"]:
            for i in columns:
                assert row[i] <= edge, (table["head"][i], row[i], edge)
                checked += 1
    return checked


@pytest.mark.slow  # starts Chromium twice
def test_example_comments_keep_their_verdicts_in_view():
    _chromium_or_skip()
    long_names = _run_report("a/very/long/path/to/a/registered/test_" + "x" * 120 + ".py")
    assert _check(run_md.markdown(long_names, blob=BLOB)) > 20
    assert _check(diff_md.markdown(_static_report(), blob=BLOB)) >= 4


@pytest.mark.slow
def test_the_check_bites_on_a_path_first_table():
    _chromium_or_skip()
    path = "test/registered/" + "deep/" * 40 + "test_x.py"
    table = f"| File | Status |\n|---|---|\n| `{path}` | 🔴 over |\n"
    with pytest.raises(AssertionError):
        _check(table)


# ---- sglang's scale: a run-ci run of ~800 files (fixtures/sglang_run, see tests/sglang_run.py)

FIRST_SCREEN_LINES = 40  # markdown lines before the suite totals
SGLANG_BLOB = "https://github.com/sgl-project/sglang/blob/" + "c" * 40


def test_a_run_of_sglangs_size_puts_verdict_action_and_suite_totals_first():
    import sglang_run

    report = sglang_run.report()
    assert len(report.lines) > 800 and len(report.suites) > 10
    text = run_md.markdown(report, blob=SGLANG_BLOB)
    assert len(text) <= 65_536
    lines = text.splitlines()
    totals = lines.index("### Suite totals")
    assert totals <= FIRST_SCREEN_LINES, totals
    assert lines[1].startswith("## 🛑 ci-budget: 1 file timed out (")
    first = "\n".join(lines[:totals])
    assert "### Files that need action" in first and "<details>" not in first
    # every file that needs action is in the comment, the costliest on the first screen
    short = short_names(x.file for x in report.lines)
    attention = [x for x in report.lines if x.status in ("timeout", "over", "failed")]
    assert all(f"`{short[x.file]}`" in text for x in attention)
    assert (
        first.count("| 🔴 over |") + first.count("| ⏱️ timeout |") + first.count("| ❌ failed |")
        == run_md.ACTION_ROWS
    )
    # the rest is folded, grouped by status
    rest = "\n".join(lines[totals:])
    for group in ("🟡 Near budget", "💤 Budget far above", "✅ Within budget"):
        assert f"<details><summary>{group}" in rest or f"{group}" not in rest


@pytest.mark.slow  # starts Chromium twice
def test_a_run_of_sglangs_size_in_chromium_shows_the_suite_totals_on_the_first_screen():
    import sglang_run

    _chromium_or_skip()
    report = sglang_run.report()
    text = run_md.markdown(report, blob=SGLANG_BLOB)
    drawn = comment_page.drawn(text)
    tops = dict(drawn["headings"])
    assert tops["Suite totals"] < 1_000, drawn  # was 8,054 px, after 380 lines of files
    assert drawn["height"] < 2_500, drawn  # was 8,701 px
    assert _check(text) > 20  # and no verdict column past the right edge


def test_the_first_screen_stays_short_however_much_needs_action():
    from ci_budget.models import ArchCell, ArchRow
    from tests.render.test_render import big_report

    report = big_report(n=3000, over_every=2)  # ~1,500 files that need action
    report.arch_rows = [
        ArchRow(file=f"test/registered/area0/test_case_{i:05d}.py", line=9, case=f"case {i}",
                ci_arch="sm90", flags=["unverified on CI arch"],
                reverted={"sm90": ArchCell(raw="n/a", na=True)})
        for i in range(30)
    ]  # fmt: skip
    text = run_md.markdown(report, blob=BLOB)
    lines = text.splitlines()
    assert lines.index("### Suite totals") <= FIRST_SCREEN_LINES
    assert "30 guard rows unverified on SM90" in lines[1]
    assert "<details><summary>26 more architecture rows</summary>" in text


# ---- the reader's view: the verdict and the action list first, one picture in view ----

FIRST_SCREEN_PX = 800  # what a 1,012 px wide window shows before any scrolling, at least


def _unfolded(markdown: str) -> str:
    """The markdown a reader sees before opening any <details>."""
    import re

    return re.sub(r"<details>.*?</details>", "", markdown, flags=re.S)


def test_one_picture_in_view_and_no_line_joins_two_files():
    from ci_budget.render import mermaid

    run = run_md.markdown(_run_report())
    budget = diff_md.markdown(_static_report())
    for text in (run, budget):
        assert _unfolded(text).count("```mermaid") == 1, text
    assert budget.count("```mermaid") == 3  # the others are a click away
    assert "<details><summary>2 more pictures</summary>" in budget
    chart = mermaid.run_chart(_run_report()).splitlines()
    assert chart[1] == "xychart-beta horizontal"  # names beside their bars, whole
    [line] = [x for x in chart if x.startswith("    line [")]
    assert set(line.removeprefix("    line [").removesuffix("]").split(", ")) == {"100"}
    # an xychart is 700 px wide whatever the column: its title must fit that (a Gantt spans
    # the column)
    for block in (run + budget).split("```mermaid")[1:]:
        if block.startswith("\nxychart"):
            title = next(x for x in block.splitlines() if x.startswith("    title "))
            assert len(title.removeprefix("    title ").strip('"')) <= 57, title


@pytest.mark.slow  # starts Chromium twice per comment
def test_the_example_comments_open_on_their_verdict_and_action_list(tmp_path):
    import example_comments

    _chromium_or_skip()
    if not comment_page.MERMAID_JS.is_file():
        pytest.skip("needs `npm ci` in tests/mermaid")
    for comment, action in (
        (example_comments.run_comment(tmp_path), "Files that need action (2)"),
        (example_comments.budget_comment(tmp_path / "b"), "Changed registrations"),
    ):
        tops = dict(comment_page.drawn(comment)["headings"])
        headline = next(iter(tops))
        assert tops[headline] < 50 and headline.startswith("🛑 ci-budget:")
        assert tops[action] < FIRST_SCREEN_PX - 150, tops  # and its first rows
        drawn = ("Measured vs est_time", "Measured history vs est_time", "Predicted shards")
        pictures = [t for t in tops if t.startswith(drawn)]
        assert len(pictures) == 1 and tops[pictures[0]] > tops[action]
