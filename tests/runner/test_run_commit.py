"""The results record the commit that was checked out and run, not the event's GITHUB_SHA."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from gitrepo import git

TEST = """\
def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time=5, stage="base-a", runner_config="1-gpu-large")


def test_ok():
    assert True


if __name__ == "__main__":
    main()
"""


def test_checked_out_head_wins_over_github_sha(tmp_path):
    path = tmp_path / "test" / "registered" / "test_a.py"
    path.parent.mkdir(parents=True)
    path.write_text(TEST)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "pr head")
    head = git(tmp_path, "rev-parse", "HEAD")
    env = {**os.environ, "GITHUB_SHA": "0" * 40}  # issue_comment: the default branch's tip
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(tmp_path),
         "--suite", "base-a-test-1-gpu-large", "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["meta"]["commit"] == head
