"""The bundled example's two PR comments as PNGs, from results kept in the repository:

    python scripts/example_comments.py          # docs/images/run-comment.png, budget-comment.png

- run report: `ci-budget report` on examples/bitexact/results/demo-cpu.json (the README's demo,
  run on a 2-core machine under load);
- static report: the example copied into a temporary git repository, a PR on top of it that
  raises the over-budget sweep's est_time from 5 s to 9 s and adds a 700 s soak to the same
  stage, and `ci-budget diff --base HEAD~1 --history` with a store made from the recorded demo
  runs (examples/bitexact/results/demo-*.json).

Each comment is drawn by scripts/comment_page.py in headless Chromium at GitHub's width, with its
Mermaid pictures drawn by the mermaid package of tests/mermaid (`npm ci` there first).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import comment_page

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "bitexact"
RESULTS = EXAMPLE / "results"
IMAGES = REPO / "docs" / "images"
SWEEP = "test/registered/radix_cache/test_long_prefix_sweep.py"
NEW_SOAK = '''"""A day-long prefix cache soak, cut to 700 s for CI."""

register_cuda_ci(est_time=700, stage="base-b", runner_config="1-gpu-large")
'''


def cli(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "ci_budget.cli", *args], cwd=cwd, text=True,
                          capture_output=True)  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"ci-budget {' '.join(args)}: {done.stderr.strip()}")


def git(cwd: Path, *args: str) -> None:
    when = "2026-12-01T06:00:00Z"  # fixed, so the base commit (shown in the comment) is too
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-c", "user.name=example", "-c", "user.email=example@localhost",
                    *args], cwd=cwd, env=env, check=True, capture_output=True)  # fmt: skip


def run_comment(tmp: Path) -> str:
    """The demo's results against a copy of the example outside any git checkout: the report
    compares the commit they ran at with the checkout's, and this repository has moved on."""
    out, root = tmp / "run.md", tmp / "example-run"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("results", "__pycache__"))
    cli("report", "--root", str(root), "--results", str(RESULTS / "demo-cpu.json"),
        "--format", "markdown", "--out", str(out), cwd=tmp)  # fmt: skip
    return out.read_text(encoding="utf-8")


def budget_comment(tmp: Path) -> str:
    repo = tmp / "example"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("results", "__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    sweep = repo / SWEEP
    text = sweep.read_text(encoding="utf-8")
    sweep.write_text(text.replace("est_time=5,", "est_time=9,", 1), encoding="utf-8")
    (repo / "test/registered/radix_cache/test_cache_soak_day.py").write_text(NEW_SOAK)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the PR")
    store = tmp / "history.json"
    runs = sorted(str(p) for p in RESULTS.glob("demo-*.json"))
    cli("history", "add", *runs, "--history", str(store), cwd=tmp)
    out = tmp / "budget.md"
    cli("diff", "--root", str(repo), "--base", "HEAD~1", "--history", str(store),
        "--format", "markdown", "--out", str(out), cwd=tmp)  # fmt: skip
    return out.read_text(encoding="utf-8")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        comment_page.screenshot(run_comment(tmp), IMAGES / "run-comment.png")
        comment_page.screenshot(budget_comment(tmp), IMAGES / "budget-comment.png")
    print(f"wrote {IMAGES / 'run-comment.png'} and {IMAGES / 'budget-comment.png'}")


if __name__ == "__main__":
    main()
