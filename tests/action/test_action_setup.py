"""scripts/action_setup.sh's choices that need no network: a wrong installer setting, uv
required where none can be had (each a one-line error), and a failed install that leaves
nothing behind in the tool cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def setup(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    # A PATH with this Python as python3 and the system tools, but no uv.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python3").unlink(missing_ok=True)
    (bin_dir / "python3").symlink_to(sys.executable)
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    if shutil.which("uv", path=path):
        pytest.skip("uv is installed system-wide here")
    base = {"PATH": path, "HOME": str(tmp_path), "ACTION_PATH": str(ROOT)}
    base |= {"INPUT_COMMAND": "run", "GITHUB_OUTPUT": str(tmp_path / "out")}
    base |= {"RUNNER_TOOL_CACHE": str(tmp_path / "cache"), "RUNNER_TEMP": str(tmp_path)}
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "action_setup.sh")],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unknown_installer_is_a_one_line_error(tmp_path):
    done = setup(tmp_path, CI_BUDGET_INSTALLER="conda")
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "::error title=ci-budget setup::CI_BUDGET_INSTALLER must be auto, uv or pip, not 'conda'"
    )
    assert not (tmp_path / "out").exists()


def test_uv_required_behind_a_mirror_without_uv_fails_before_installing(tmp_path):
    # Behind a mirror (PIP_INDEX_URL) uv's wheel is not fetched from PyPI's file host.
    done = setup(tmp_path, CI_BUDGET_INSTALLER="uv", PIP_INDEX_URL="http://127.0.0.1:9/simple")
    assert done.returncode == 1
    assert (
        "::error title=ci-budget setup::CI_BUDGET_INSTALLER=uv, but no uv on PATH and none "
        "could be fetched" in done.stdout
    )
    venvs = [p.name for p in (tmp_path / "cache" / "ci-budget").iterdir()]
    assert not [name for name in venvs if name.startswith("run-")]


def test_a_failed_install_leaves_nothing_half_built_in_the_tool_cache(tmp_path):
    cache = tmp_path / "cache" / "ci-budget"
    cache.mkdir(parents=True)
    dead = cache / ".new-killed"  # what a job killed mid-install two hours ago left
    (dead / "lib").mkdir(parents=True)
    two_hours_ago = (dead.stat().st_mtime - 7200,) * 2
    os.utime(dead, two_hours_ago)
    fresh = cache / ".new-racing"  # another job's install in progress: not touched
    fresh.mkdir()
    # pip against a mirror that refuses connections: the install fails at once.
    done = setup(
        tmp_path,
        CI_BUDGET_INSTALLER="pip",
        PIP_INDEX_URL="http://127.0.0.1:9/simple",
        PIP_RETRIES="0",
        PIP_TIMEOUT="2",
    )
    assert done.returncode != 0
    assert sorted(p.name for p in cache.iterdir()) == [".new-racing"]
    assert not (tmp_path / "out").exists()


def _site_packages(venv: Path) -> Path:
    (site,) = venv.glob("lib/python3*/site-packages")
    return site


def _network_env() -> dict[str, str]:
    """This machine's way to the package index (mirror, proxy, certificates): a real install."""
    names = ("PIP_", "UV_", "SSL_CERT", "CURL_CA", "REQUESTS_CA", "HTTP", "NO_PROXY")
    return {k: v for k, v in os.environ.items() if k.upper().startswith(names)}


@pytest.mark.slow  # builds venvs
def test_the_cached_venv_is_reused_only_while_it_matches_its_manifest(tmp_path):
    """A .pth planted in the cached venv (by tests of an earlier job, or anything else that ran
    as the runner user) used to run in the next job: the venv was trusted by a stamp file."""
    net = _network_env()
    first = setup(tmp_path, **net)
    assert first.returncode == 0, first.stdout + first.stderr
    written = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    venv, cli = Path(written["venv"]), written["cli"]
    # Running ci-budget writes nothing into its venv (bytecode was compiled at install, -B).
    assert subprocess.run([cli, "--version"], capture_output=True).returncode == 0
    again = setup(tmp_path, **net)
    assert "reusing the run dependencies" in again.stdout, again.stdout + again.stderr
    marker = tmp_path / "the-pth-ran"
    planted = _site_packages(venv) / "zz_planted.pth"
    planted.write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n")
    third = setup(tmp_path, **net)
    assert third.returncode == 0, third.stdout + third.stderr
    (warning,) = [x for x in third.stdout.splitlines() if x.startswith("::warning")]
    assert "changed since they were installed" in warning and "zz_planted.pth" in warning
    assert "installing run dependencies" in third.stdout
    assert not planted.exists()
    assert subprocess.run([cli, "--version"], capture_output=True).returncode == 0
    assert not marker.exists(), "the planted .pth ran"
