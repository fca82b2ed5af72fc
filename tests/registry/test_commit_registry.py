"""A PR commit's registrations read as data: fetched by SHA into the base checkout, parsed from
git blobs, never checked out (the working tree stays the base branch's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import git

from ci_budget.config import Config, parse_config
from ci_budget.workspace.git import GitError
from ci_budget.workspace.scan import registrations_at

LINE = 'register_cuda_ci(est_time={est}, stage="base-b", runner_config="{runner}")\n'


def write(repo: Path, rel: str, est: int, runner: str = "1-gpu-large") -> None:
    path = repo / "test" / "registered" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LINE.format(est=est, runner=runner) + "raise SystemExit('never run')\n")


@pytest.fixture
def origin_and_clone(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    write(origin, "test_a.py", 100)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{origin}", str(clone))
    # the PR: a commit the clone has never seen, reachable in origin only from a PR ref
    git(origin, "checkout", "-q", "-b", "pr")
    write(origin, "test_new.py", 300, "8-gpu-h200")
    write(origin, "test_a.py", 150)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "pr")
    sha = git(origin, "rev-parse", "HEAD")
    git(origin, "update-ref", "refs/pull/7/head", sha)
    git(origin, "checkout", "-q", "main")
    git(origin, "branch", "-q", "-D", "pr")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub allows
    return clone, sha


def test_registrations_of_an_unfetched_pr_commit_are_read_without_checking_it_out(
    origin_and_clone,
):
    clone, sha = origin_and_clone
    found = registrations_at(clone, sha, Config())
    assert sorted((r.file, r.est_time, r.runner_config) for r in found) == [
        ("test/registered/test_a.py", 150, "1-gpu-large"),
        ("test/registered/test_new.py", 300, "8-gpu-h200"),
    ]
    assert not (clone / "test" / "registered" / "test_new.py").exists()  # the tree is untouched
    assert "est_time=100" in (clone / "test" / "registered" / "test_a.py").read_text()


def test_the_checkouts_config_decides_which_files_count(origin_and_clone):
    clone, sha = origin_and_clone
    config = parse_config({"exclude": ["test_new.py"]}, "t")
    assert [r.file for r in registrations_at(clone, sha, config)] == ["test/registered/test_a.py"]


def test_a_commit_that_cannot_be_fetched_is_an_error_naming_it(origin_and_clone):
    clone, _ = origin_and_clone
    with pytest.raises(GitError, match="git fetch 0000000000ab failed"):
        registrations_at(clone, "0000000000ab" + "0" * 28, Config())
    with pytest.raises(GitError, match="not a full commit SHA"):
        registrations_at(clone, "HEAD", Config())
