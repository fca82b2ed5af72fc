"""The docs hold to the code and to themselves: the generated reference tables are current, every
relative link in the README and docs/ resolves (file and heading), and the README stays a
five-minute read with both of its commands on the first screen."""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

import pytest
from helpers.readme import FIRST_SCREEN, README, bash_blocks, two_commands
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_tables_are_current():
    assert _gen_docs().stale() == [], "run: python scripts/gen_docs.py"


def test_a_stale_table_is_found(tmp_path):
    """The check sees a hand edit inside a generated block (and only there)."""
    gen = _gen_docs()
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    edited = page.replace('| `"auto"` |', '| `"none"` |', 1)
    assert edited != page
    assert gen.render(edited) == page
    prose = page.replace("Nothing is required.", "Nothing at all is required.", 1)
    assert gen.render(prose) == prose


# ---- links --------------------------------------------------------------------------------

MD = MarkdownIt("commonmark").enable("table")


def slug(text: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@functools.cache
def anchors(path: Path) -> set[str]:
    tokens = MD.parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for opening, inline in zip(tokens, tokens[1:], strict=False):
        if opening.type != "heading_open":
            continue
        text = "".join(c.content for c in inline.children if c.type in ("text", "code_inline"))
        base = slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    """Every link and image target of the page, markdown and HTML, outside code."""
    out = []
    for token in MD.parse(path.read_text(encoding="utf-8")):
        for child in [token, *(token.children or [])]:
            if child.type in ("link_open", "image"):
                out.append(child.attrs.get("href") or child.attrs.get("src"))
            if child.type in ("html_block", "html_inline"):
                out += re.findall(r'(?:src|href)="([^"]+)"', child.content)
    return out


def broken(path: Path) -> list[str]:
    out = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            out.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{target}: no such heading")
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert broken(page) == []


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "b.md").write_text("# The action's inputs\n\n## `ci-budget run`\n")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#the-actions-inputs) [ok](b.md#ci-budget-run) [gone](c.md) "
        "[no anchor](b.md#nothing) `[code](c.md)`\n\n```\n[fenced](c.md)\n```\n"
        '<img src="d.png">\n'
    )
    assert broken(page) == [
        "c.md: no such file",
        "b.md#nothing: no such heading",
        "d.png: no such file",
    ]


# ---- the README ---------------------------------------------------------------------------


def test_readme_is_short():
    assert len(README.read_bytes()) <= 12 * 1024


def test_both_commands_are_on_the_first_screen():
    text = README.read_text(encoding="utf-8")
    first = [line for line, _ in bash_blocks(text)[:2]]
    assert len(first) == 2 and max(first) + 2 <= FIRST_SCREEN, first
    demo, test = two_commands(text)
    assert "pip install -q . numpy" in demo
    assert "ci-budget run --root examples/bitexact" in demo
    assert "ci-budget report --root examples/bitexact" in demo
    # .ci/run is "the README's test command" with the tools around it: the same install and run.
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -q -e '.[test]'" in test and "pip install -q -e '.[test]'" in ci
    assert test.endswith("python -m pytest")
    assert re.search(r"^python -m pytest$", ci, re.M)
