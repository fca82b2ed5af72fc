"""ci-budget installs without a package index entry for it: the wheel built from a clean clone
of this commit, and `pip install git+URL@SHA` of a pinned commit (docs/adopting.md, Pinning),
each in a fresh virtualenv, give a working `ci-budget` command. Its dependencies come from the
index pip is configured with, as on a runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import git

ROOT = Path(__file__).resolve().parent.parent


def _run(*args, cwd=None) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_of_a_clean_clone_and_a_pinned_commit_install_in_a_fresh_venv(tmp_path):
    from ci_budget import __version__

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(ROOT), str(clone))
    sha = git(clone, "rev-parse", "HEAD")
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"),
         str(clone))  # fmt: skip
    [wheel] = sorted((tmp_path / "dist").glob("ci_budget-*.whl"))
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv))
    _run(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel))
    # run from elsewhere: nothing of the source tree is on the path
    assert _run(str(venv / "bin" / "ci-budget"), "--version", cwd=tmp_path) == (
        f"ci-budget {__version__}\n"
    )
    _run(str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-q", "-y", "ci-budget")
    pinned = f"git+file://{clone}@{sha}"  # the form of docs/adopting.md, Pinning
    _run(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", pinned)
    assert _run(str(venv / "bin" / "ci-budget"), "--version", cwd=tmp_path).startswith("ci-budget ")
    where = _run(str(venv / "bin" / "python"), "-c", "import ci_budget; print(ci_budget.__file__)",
                 cwd=tmp_path)  # fmt: skip
    assert where.startswith(str(venv)), where
