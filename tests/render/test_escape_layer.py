"""The one escaping layer (`render.escape`): bidi and invisible code points are shown, never
applied, in every medium; `inline` keeps ci-budget's own code spans and makes the rest inert."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from ci_budget.render.escape import _HIDDEN, code, html, inline, md, plain, visible
from tests.render.test_untrusted import CORPUS, LIVE, tokens


def test_every_format_character_of_this_python_is_shown():
    hidden = [
        chr(c) for c in range(0x80, sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"
    ]
    missed = [f"U+{ord(c):04X}" for c in hidden if not _HIDDEN.fullmatch(c)]
    assert missed == []


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\u200e", "\ufeff", "\u3164"])
@pytest.mark.parametrize("medium", [plain, md, html, code, visible])
def test_bidi_and_invisible_code_points_are_shown_in_every_medium(char, medium):
    out = medium(f"test_{char}x.py")
    assert char not in out and f"U+{ord(char):04X}" in out


def _live(rendered_tokens) -> list[str]:
    bad = []
    for token in rendered_tokens:
        if token.type in ("link_open", "image", "html_inline", "html_block", "heading_open"):
            bad.append(token.type)
        if token.type == "text" and LIVE.search(token.content):
            bad.append(token.content)
    return bad


@pytest.mark.parametrize("text", CORPUS)
def test_inline_keeps_our_code_spans_and_makes_the_rest_inert(text):
    line = inline(f"`{text.replace('`', chr(39))}`: not registered under {text}; see `x`")
    found = list(tokens(line))
    assert _live(found) == []
    spans = [t.content for t in found if t.type == "code_inline"]
    assert "<!--" not in line
    if "`" not in text:  # backticks in the text pair with ours: still inert, spans differ
        assert len(spans) == 2 and spans[1] == "x"


def test_inline_with_an_unpaired_backtick_is_text():
    line = inline("dir `evil/@team <b>x</b>")
    assert _live(tokens(line)) == [] and [t for t in tokens(line) if t.type == "code_inline"] == []
