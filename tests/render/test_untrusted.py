"""Untrusted text is data: an adversarial corpus in every field of the run and budget reports,
parsed by a real CommonMark parser (markdown-it-py), yields no mention, reference, link, image,
HTML element, heading, code block or marker from the input."""

from __future__ import annotations

import html
import re

import pytest
from helpers.registry import reg
from markdown_it import MarkdownIt

from ci_budget.budget.diff import Change, HistoryNote, StaticReport
from ci_budget.budget.impact import SuiteImpact
from ci_budget.budget.status import build_report
from ci_budget.config import Config
from ci_budget.history.model import Stats
from ci_budget.models import (
    ArchCell,
    ArchRow,
    ClassTiming,
    FileResult,
    GpuInfo,
    Problem,
    RegistryScan,
    RunMeta,
    RunResults,
)
from ci_budget.render.diff_md import markdown as budget_markdown
from ci_budget.render.escape import code, md
from ci_budget.render.run_md import markdown as run_markdown

CORPUS = [
    "@org/team see [docs](https://x.example/pwn)",
    "<img src=x onerror=alert(1)>",
    "<details open><summary>pwn</summary>",
    "```\n# PWN fenced\n```",
    "`` a `b` ``` c",
    "\r##[error]PWN fake annotation",
    "::add-mask::PWN",
    "<!-- ci-budget:run -->",
    "<!-- ci-budget:run:section:pwn -->\nPWN\n<!-- ci-budget:run:end:pwn -->",
    "dir/evil\nname.py",
    "#123 and owner/repo#1 and GH-9",
    "# PWN heading",
    "PWN\n===",
    "- PWN list",
    "1. PWN ordered",
    "> PWN quote",
    "    PWN indented code",
    "![PWN](https://x.example/i.png)",
    "<https://x.example/auto>",
    "www.x.example and mail me@x.example",
    "a | b \\| c \\",
    "&lt;script&gt; &#64;org",
    "*PWN* _PWN_ ~~PWN~~ [ref]: https://x.example",
]
SUITE = "base-b-test-1-gpu-large"
ALLOWED_TAGS = {
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<code>",
    "</code>",
    "<sub>",
    "</sub>",
}
OUR_HEADINGS = (
    "ci-budget: ",
    "🔴 Over budget",
    "🟡 Near budget",
    "💤 Budget far",
    "✅ Within budget",
    "⚪ Not run",
    "Suite totals",
    "Suggested budgets",
    "Registry problems",
    "Registry warnings",
    "Architecture rows not verified",
    "Notes",
    "✅ ci-budget: ",
    "⚠️ ci-budget: ",
    "🛑 ci-budget: ",
    "Registry errors introduced",
    "Suites",
    "Changed registrations",
    "Measured history",
    "Architecture table flags",
    "Measured vs est_time",
    "Predicted makespan per suite",
    "Files that need action",
    "Everything else",
    "Predicted shards of the suites",
)
# What GitHub turns into a mention, an issue/PR reference or an autolink in text.
LIVE = re.compile(
    r"(?<![\w`])@[A-Za-z0-9]|(?<![\w&])#\d|\bGH-\d|[\w.-]+/[\w.-]+#\d|://|\bwww\.", re.I
)
PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def tokens(text: str):
    for token in PARSER.parse(text):
        yield token
        yield from token.children or []


def assert_inert(text: str, marker: str, own_fences: int = 0) -> None:
    assert text.count("<!--") == 1 and text.startswith(marker + "\n")
    headings, fences = [], 0
    all_tokens = list(tokens(text))
    for i, token in enumerate(all_tokens):
        assert token.type not in ("link_open", "image", "code_block", "blockquote_open")
        if token.type == "heading_open":
            headings.append(all_tokens[i + 1].content)
        if token.type == "fence" and token.info == "mermaid":  # our charts; labels are filtered
            assert not re.search(r"[<@`]|://|%%\{", token.content), token.content
        elif token.type == "fence":
            fences += 1
            assert token.info == "text"
        if token.type in ("html_block", "html_inline"):
            content = token.content.strip()
            if content == marker:
                continue
            assert "<!--" not in content
            assert set(re.findall(r"<[^<>]*>", content)) <= ALLOWED_TAGS, content
            shown = html.unescape(re.sub(r"<[^<>]*>", "", content))
            assert not LIVE.search(shown), shown
        if token.type == "text":
            assert not LIVE.search(token.content), token.content
    assert fences <= own_fences
    assert all(h.startswith(OUR_HEADINGS) for h in headings), headings
    tables = [m.group() for m in re.finditer(r"(?m)^\|.*\|$(?:\n^\|.*\|$)*", text)]
    for table in tables:
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(widths) == 1, table


def evil(i: int) -> str:
    return CORPUS[i % len(CORPUS)]


def run_report():
    regs, files = [], []
    for i, text in enumerate(CORPUS):
        path = f"test/registered/{text}_{i}.py"
        if i % 2:
            regs.append(reg(path, 100, SUITE, runner=evil(i + 1), line=3))
        status = ["passed", "failed", "timeout"][i % 3]
        files.append(
            FileResult(
                path=path, suite=SUITE if i % 4 else text, elapsed=150.0 + i, status=status,
                message=evil(i + 2), in_flight=evil(i + 3), timeout=160.0,
                classes=[ClassTiming(name=evil(i + 4), total=100.0, complete=bool(i % 2))],
            )
        )  # fmt: skip
    scan = RegistryScan(
        registrations=regs,
        errors=[Problem(file=regs[0].file, line=1, message=t) for t in CORPUS[:5]],
        warnings=[Problem(file=regs[1].file, line=1, message=t) for t in CORPUS[5:10]],
    )
    meta = RunMeta(
        suites=[SUITE],
        runner_config=evil(4),
        partition=evil(5),
        commit=evil(6),
        configured_arch=evil(7),
        gpu=GpuInfo(name=evil(0), arch=evil(1), compute_capability=evil(2), count=2),
    )
    report = build_report(scan, [RunResults(meta=meta, files=files)], Config())
    report.notes += CORPUS
    report.arch_rows = [
        ArchRow(
            file=regs[0].file, line=40, group=evil(i), case=evil(i + 1), flags=[evil(i + 2)],
            reverted={evil(i + 3): ArchCell(raw=evil(i + 4))}, measured={evil(i + 5): 1.0},
        )
        for i in range(len(CORPUS))
    ]  # fmt: skip
    return report


def test_run_report_renders_no_live_markup():
    report = run_report()
    assert any(line.suggestion for line in report.lines)  # the fenced block is there
    text = run_markdown(report)
    assert_inert(text, "<!-- ci-budget:run -->", own_fences=1)
    assert "not shown" not in text  # every field above was rendered


@pytest.mark.parametrize("limit", [4000, 20000])
def test_cut_run_report_stays_inert(limit):
    text = run_markdown(run_report(), limit=limit)
    assert len(text) <= limit
    assert_inert(text, "<!-- ci-budget:run -->", own_fences=1)


def test_budget_report_renders_no_live_markup():
    changes, suites, history = [], [], []
    for i, text in enumerate(CORPUS):
        changes.append(
            Change(
                file=text, backend="cuda", line=i, kinds=["moved", "disabled", "est_time"],
                suite_before=evil(i + 1), suite_after=evil(i + 2), est_before=10, est_after=99,
                disabled_after=evil(i + 3), gpu_seconds_delta=89,
            )
        )  # fmt: skip
        suites.append(SuiteImpact(suite=text, backend="cuda", timeout_s=600, gpus=1))
        stats = Stats(
            file=text,
            suite=evil(i + 1),
            runs=3,
            n=2,
            p50=1,
            p90=2,
            max=3,
            timeouts=1,
            timeout_lower_bound=5,
        )
        history.append(HistoryNote(file=text, suite=evil(i + 1), stats=stats))
    report = StaticReport(
        base_ref=evil(0),
        changes=changes,
        suites=suites,
        history=history,
        errors_introduced=[Problem(file=t, line=1, message=evil(i)) for i, t in enumerate(CORPUS)],
        arch_rows=[ArchRow(file=t, line=2, case=evil(i), flags=[t]) for i, t in enumerate(CORPUS)],
        arch_problems=[Problem(file=t, line=3, message=t) for t in CORPUS],
        notes=CORPUS,
        algorithm=evil(3),
    )
    text = budget_markdown(report)
    assert_inert(text, "<!-- ci-budget:budget -->")
    assert "not shown" not in text


@pytest.mark.parametrize("text", CORPUS)
def test_escaped_text_reads_as_the_input(text):
    # Inert, yet a reader sees the input (newlines as spaces; zero-width spaces are invisible).
    rendered = PARSER.render(md(text)).replace("\u200b", "")
    shown = html.unescape(re.sub(r"<[^<>]*>", "", rendered))
    assert shown.split() == text.split()
    spans = [t for t in tokens(code(text, cell=False)) if t.type == "code_inline"]
    assert len(spans) == 1
    assert spans[0].content.replace("\u200b", "") == re.sub(r"[\r\n]+", " ", text)
