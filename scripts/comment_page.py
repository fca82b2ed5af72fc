"""Render a ci-budget comment as GitHub would, in headless Chromium, at GitHub's comment width.

    python scripts/comment_page.py REPORT.md OUT.png     # a screenshot (Mermaid drawn)
    python scripts/comment_page.py REPORT.md             # its height and headings' offsets

Markdown -> HTML with markdown-it-py (CommonMark + tables) and a stylesheet with GitHub's rules
that matter for layout (font, table cells, tables scrolling sideways when too wide). The tests
use `layout()` to check that no essential column is past the right edge.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH = 1012  # GitHub's comment body column, in CSS pixels
MERMAID_JS = (
    Path(__file__).resolve().parents[1] / "tests/mermaid/node_modules/mermaid/dist/mermaid.min.js"
)
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--force-device-scale-factor=1",
]  # fmt: skip
CSS = """
body { margin: 0; background: #fff; }
.markdown-body { box-sizing: border-box; width: WIDTHpx; padding: 16px;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
  color: #1f2328; word-wrap: break-word; }
.markdown-body h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
.markdown-body h3 { font-size: 1.25em; }
.markdown-body table { display: block; width: max-content; max-width: 100%; overflow: auto;
  border-spacing: 0; border-collapse: collapse; margin: 0 0 16px; }
.markdown-body td, .markdown-body th { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body code { font: 85% ui-monospace, SFMono-Regular, Menlo, monospace;
  background: rgba(129,139,152,.12); padding: .2em .4em; border-radius: 6px; }
.markdown-body pre { background: #f6f8fa; padding: 16px; overflow: auto; }
.markdown-body pre code { background: none; padding: 0; }
""".replace("WIDTH", str(WIDTH))
# Mermaid draws, then the page's height is written where `height()` finds it: the screenshot
# is as tall as the comment.
# Each heading's top is written too: how far down a reader finds it (folded <details> stay shut,
# as GitHub shows them).
DRAWN = """mermaid.run().finally(() => { const h = document.createElement("pre");
  const body = document.querySelector(".markdown-body"), top = body.getBoundingClientRect().top;
  h.id = "height"; h.hidden = true; h.textContent = body.scrollHeight;
  const heads = document.createElement("pre"); heads.id = "headings"; heads.hidden = true;
  heads.textContent = JSON.stringify([...body.querySelectorAll("h2, h3")].map(
    e => [e.textContent.trim(), Math.round(e.getBoundingClientRect().top - top)]));
  document.body.appendChild(h); document.body.appendChild(heads); });</script>"""
MEASURE = """
<script>
window.addEventListener("load", () => {
  const body = document.querySelector(".markdown-body").getBoundingClientRect();
  const tables = [...document.querySelectorAll("table")].map(t => ({
    head: [...t.querySelectorAll("th")].map(th => th.textContent.trim()),
    right: [...t.querySelectorAll("tr")].map(tr => [...tr.children].map(c => c.getBoundingClientRect().right)),
    lines: [...t.querySelectorAll("tr")].map(tr => [...tr.children].map(c => Math.round(c.getBoundingClientRect().height / 21))),
  }));
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify({ right: body.right - 16, tables });
  document.body.appendChild(out);
});
</script>
"""


def to_html(markdown: str, measure: bool = False, mermaid: bool = False) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    if mermaid and MERMAID_JS.is_file():
        # GitHub draws ```mermaid blocks; here mermaid.min.js does, from the local npm install.
        body = re.sub(
            r'<pre><code class="language-mermaid">(.*?)</code></pre>',
            lambda m: f'<pre class="mermaid">{m.group(1)}</pre>', body, flags=re.S,
        )  # fmt: skip
        body += f'<script src="{MERMAID_JS.as_uri()}"></script>'
        body += "<script>mermaid.initialize({startOnLoad: false, theme: 'default'});" + DRAWN

    script = MEASURE if measure else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head>"
        f"<body><article class='markdown-body'>{body}</article>{script}</body></html>"
    )


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


def _run(args: list[str], page: str, timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "comment.html"
        path.write_text(page, encoding="utf-8")
        cmd = [
            chromium() or "chromium",
            *FLAGS,
            f"--user-data-dir={tmp}/profile",
            *args,
            path.as_uri(),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def layout(markdown: str) -> dict:
    """Right edge of the comment column and, per table, each cell's right edge."""
    done = _run([f"--window-size={WIDTH},2000", "--virtual-time-budget=5000", "--dump-dom"],
                to_html(markdown, measure=True))  # fmt: skip
    found = re.search(r'<pre id="layout">(.*?)</pre>', done.stdout, flags=re.S)
    if not found:
        raise RuntimeError(f"chromium gave no layout: {done.stderr[-500:]}")
    return json.loads(html.unescape(found.group(1)))


def drawn(markdown: str) -> dict:
    """The comment with its pictures drawn: `height` in pixels, and `headings`, each
    `[text, pixels from the top]`."""
    done = _run([f"--window-size={WIDTH},2000", "--virtual-time-budget=15000", "--dump-dom"],
                to_html(markdown, mermaid=True))  # fmt: skip
    found = re.search(r'<pre id="height"[^>]*>(\d+)</pre>', done.stdout)
    heads = re.search(r'<pre id="headings"[^>]*>(.*?)</pre>', done.stdout, flags=re.S)
    if not found or not heads:
        raise RuntimeError(f"chromium drew no pictures: {done.stderr[-500:]}")
    return {"height": int(found.group(1)), "headings": json.loads(html.unescape(heads.group(1)))}


def height(markdown: str) -> int:
    """The comment's height in pixels with its pictures drawn."""
    return drawn(markdown)["height"]


def screenshot(markdown: str, out: Path) -> None:
    """`out`: a PNG of the comment, Mermaid drawn by the local mermaid package, full height."""
    if not MERMAID_JS.is_file():
        raise RuntimeError(f"no {MERMAID_JS}: run `npm ci` in tests/mermaid")
    size = f"--window-size={WIDTH},{height(markdown)}"
    out.unlink(missing_ok=True)
    done = _run([size, "--virtual-time-budget=15000", f"--screenshot={out.resolve()}"],
                to_html(markdown, mermaid=True))  # fmt: skip
    if not out.is_file():
        raise RuntimeError(f"no screenshot: {done.stderr[-500:]}")


if __name__ == "__main__":
    text = Path(sys.argv[1]).read_text(encoding="utf-8")
    if len(sys.argv) > 2:
        screenshot(text, Path(sys.argv[2]))
    else:  # no picture asked for: the height and where each heading is, as JSON
        print(json.dumps(drawn(text)))
