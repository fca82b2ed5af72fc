"""`guard verify`: a synthetic guard that prints like sglang's KL helpers, its #34184 fix a real
commit, reverted in a temporary worktree; the table's SM90 columns filled from the two runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gitrepo import git

from ci_budget.cli import main
from ci_budget.models import GuardVerification
from ci_budget.workspace.git import GitError, head_worktree, revert
from tests.arch.test_guard_printed import REL, cells, standin_repo

STATE = "standin_state.py"


def guard_repo(tmp_path: Path) -> tuple[Path, str]:
    """The stand-in guard in a git repository: the bug first, then the fix as a commit."""
    root = standin_repo(tmp_path)
    state = (root / REL).parent / STATE
    state.write_text('REVERTED = "34184"\n')
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Guard with the bug")
    state.write_text("REVERTED = None\n")
    git(root, "commit", "-qam", "Fix #34184: save the state at the prefix end")
    return root, git(root, "rev-parse", "HEAD")


@pytest.mark.slow
def test_verify_reverts_a_commit_and_fills_this_archs_columns(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("STANDIN_STATE", raising=False)
    monkeypatch.setenv("STANDIN_ARCH", "sm90")
    root, fix = guard_repo(tmp_path)
    monkeypatch.chdir(root)
    # No GPU here: the stand-in prints SM90's numbers, so --write needs --force-arch.
    argv = ["guard", "verify", REL, "--revert", fix[:10], "--arch", "sm90", "--force-arch",
            "--python", sys.executable, "--write", "--results-dir", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"sm90, reverted commit {fix[:12]} Fix #34184" in out and "(rows of #34184)" in out
    after = cells(root)
    assert after[("#34184", "lazy test_prefill_cache_hit")] == ("5.56e-06", "3.90e-06", "0.0")
    assert after[("#29792", "multiturn branching")][1] == "5.14e-04"  # another fix's: kept
    assert "#34184 test_decode_cache_hit: silent everywhere" in out
    assert "unverified" not in out
    assert git(root, "worktree", "list").count("\n") == 0  # the temporary worktree is gone
    saved = GuardVerification.model_validate_json((tmp_path / "out/verification.json").read_text())
    lazy = [v for v in saved.values if v.case == "lazy test_prefill_cache_hit"][0]
    assert (lazy.group, lazy.reverted, lazy.fixed) == ("#34184", 3.9e-06, 0.0)
    assert saved.commit == fix and saved.group == "#34184"
    assert (tmp_path / "out/reverted.json").is_file() and (tmp_path / "out/fixed.json").is_file()
    assert git(root, "status", "--porcelain") == f"M {REL}"  # only the table was written


@pytest.mark.slow
def test_verify_write_keeps_a_crlf_file_crlf(tmp_path, monkeypatch, capsys):
    """`--write` changes the filled cells and nothing else: every line still ends in CRLF."""
    monkeypatch.delenv("STANDIN_STATE", raising=False)
    monkeypatch.setenv("STANDIN_ARCH", "sm90")
    root = standin_repo(tmp_path)
    lf = (root / REL).read_bytes()
    (root / REL).write_bytes(lf.replace(b"\n", b"\r\n"))
    state = (root / REL).parent / STATE
    state.write_text('REVERTED = "34184"\n')
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Guard with the bug")
    state.write_text("REVERTED = None\n")
    git(root, "commit", "-qam", "Fix #34184: save the state at the prefix end")
    monkeypatch.chdir(root)
    argv = ["guard", "verify", REL, "--revert", "HEAD", "--arch", "sm90", "--force-arch",
            "--python", sys.executable, "--write"]  # fmt: skip
    assert main(argv) == 0
    after = (root / REL).read_bytes()
    assert after != lf.replace(b"\n", b"\r\n")  # the table was filled
    assert after.count(b"\r\n") == lf.count(b"\n") and b"\n" not in after.replace(b"\r\n", b"")
    assert "3.90e-06" in after.decode()


def test_a_revert_that_conflicts_names_the_file_and_leaves_no_worktree(tmp_path):
    root, fix = guard_repo(tmp_path)
    state = (root / REL).parent / STATE
    state.write_text("REVERTED = False\n")
    git(root, "commit", "-qam", "Later change on the same line")
    with pytest.raises(GitError, match=f"conflict in {REL.rsplit('/', 1)[0]}/{STATE}"):
        with head_worktree(root) as tree:
            revert(tree, fix, root)
    patch = tmp_path / "fix.patch"
    patch.write_text(git(root, "show", fix, "--format=") + "\n")
    with pytest.raises(GitError, match=f"{STATE}"):
        with head_worktree(root) as tree:
            revert(tree, str(patch), root)
    with pytest.raises(GitError, match="neither a patch file nor a commit"):
        with head_worktree(root) as tree:
            revert(tree, "no-such-ref", root)
    assert git(root, "worktree", "list").count("\n") == 0


def test_verify_without_a_table_or_gpu_is_a_clear_error(tmp_path, capsys):
    root, fix = guard_repo(tmp_path)
    (root / "test_plain.py").write_text("def test_x():\n    pass\n")
    assert main(["guard", "verify", str(root / "test_plain.py"), "--root", str(root),
                 "--revert", fix, "--arch", "sm90"]) == 2  # fmt: skip
    assert "test_plain.py: no measured table" in capsys.readouterr().err


@pytest.mark.slow
def test_the_checkouts_python_dirs_reach_the_tests_env_not_this_process(tmp_path, monkeypatch):
    """`guard verify` puts the temporary checkout's `arch.pythonpath` dirs first on the tests'
    PYTHONPATH through the file's own environment; this process's stays as it was."""
    import io
    import os

    from ci_budget.app.guard_verify import _run
    from ci_budget.config import Config
    from ci_budget.models import RunMeta
    from ci_budget.sharding.select import Job

    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "only_in_checkout.py").write_text("VALUE = 7\n")
    (tmp_path / "test_uses_it.py").write_text(
        "import os\nimport only_in_checkout\n\n\ndef test_it():\n"
        "    assert only_in_checkout.VALUE == 7\n"
        "    assert os.environ['PYTHONPATH'].split(os.pathsep)[-1] == '/elsewhere'\n"
    )
    job = Job(path="test_uses_it.py", est_time=5.0, suite=None)
    args = (job, Config(), sys.executable, RunMeta(), io.StringIO())
    run = _run(tmp_path, *args, [str(tmp_path / "python")])
    assert [f.status for f in run.files] == ["passed"]
    assert os.environ["PYTHONPATH"] == "/elsewhere"
    assert [f.status for f in _run(tmp_path, *args, []).files] == ["failed"]


@pytest.mark.slow
def test_runs_that_ran_no_test_say_so_and_fail(tmp_path, monkeypatch, capsys):
    """Both runs die at import (a dependency missing from the tests' interpreter): the rows
    are unmeasured, and guard verify says so instead of printing them as a result."""
    monkeypatch.delenv("STANDIN_STATE", raising=False)
    monkeypatch.setenv("STANDIN_ARCH", "sm90")
    root, fix = guard_repo(tmp_path)
    guard = root / REL
    guard.write_text(guard.read_text() + "\nimport a_dependency_not_installed_here\n")
    git(root, "commit", "-qam", "Needs a new dependency")
    monkeypatch.chdir(root)
    argv = ["guard", "verify", REL, "--revert", fix[:10], "--arch", "sm90",
            "--python", sys.executable]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    for kind in ("reverted", "fixed"):
        assert f"{REL}: the {kind} run ran no test (" in err, err
