"""scripts/action_setup.sh and scripts/wheelhouse.py: ci-budget's dependencies come only from
wheels that match the lock in the action's own checkout, whatever the runner's tool cache holds."""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "scripts" / "wheelhouse.py"
RUN_LOCK = ROOT / "requirements" / "run.txt"


def setup(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    # A PATH with this Python as python3 and the system tools.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python3").unlink(missing_ok=True)
    (bin_dir / "python3").symlink_to(sys.executable)
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    base = {"PATH": path, "HOME": str(tmp_path), "ACTION_PATH": str(ROOT)}
    base |= {"INPUT_COMMAND": "run", "GITHUB_OUTPUT": str(tmp_path / "out")}
    base |= {"RUNNER_TOOL_CACHE": str(tmp_path / "cache"), "RUNNER_TEMP": str(tmp_path)}
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "action_setup.sh")],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "out").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def wheel(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as whl:
        for name, text in files.items():
            whl.writestr(name, text)
    return buf.getvalue()


def planted_wheel(marker: Path) -> bytes:
    """A wheel that runs code at every interpreter start of an environment it is unpacked in."""
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    return wheel({"zz_planted.pth": code, "pytest_reportlog/__init__.py": code})


def selection_path(cache: Path) -> Path:
    """Where the set-up script keeps the list of run-lock wheels for this interpreter."""
    key = hashlib.sha256(RUN_LOCK.read_bytes()).hexdigest()[:16]
    py = f"py{sys.version_info[0]}.{sys.version_info[1]}-{platform.machine()}"
    return cache / "ci-budget" / f"run-{key}-{py}.wheels"


DEAD_MIRROR = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0"}
DEAD_MIRROR |= {"PIP_TIMEOUT": "2", "PIP_CONFIG_FILE": os.devnull}  # no local find-links


def test_no_bootstrap_python_is_a_one_line_error(tmp_path):
    done = setup(tmp_path, CI_BUDGET_BOOTSTRAP_PYTHON="python-none")
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "::error title=ci-budget setup::no 'python-none' on PATH to run ci-budget "
        "(set CI_BUDGET_BOOTSTRAP_PYTHON)"
    )
    assert not (tmp_path / "out").exists()


def test_a_failed_download_leaves_nothing_half_built_in_the_tool_cache(tmp_path):
    cache = tmp_path / "cache" / "ci-budget"
    cache.mkdir(parents=True)
    dead = cache / ".new-killed"  # what a job killed mid-download two hours ago left
    (dead / "wheels").mkdir(parents=True)
    two_hours_ago = (dead.stat().st_mtime - 7200,) * 2
    os.utime(dead, two_hours_ago)
    fresh = cache / ".new-racing"  # another job's download in progress: not touched
    fresh.mkdir()
    done = setup(tmp_path, **DEAD_MIRROR)  # pip against a mirror that refuses connections
    assert done.returncode == 1
    assert "::error title=ci-budget setup::pip could not download the locked run" in done.stdout
    assert sorted(p.name for p in cache.iterdir()) == [".new-racing", "wheels"]
    assert not list((cache / "wheels").iterdir())
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("swap", ["edited", "added", "named"])
def test_a_cached_wheel_unlike_the_lock_is_refused_and_never_runs(tmp_path, swap):
    """Anything that ran as the runner's user (a workflow step with PR code) can rewrite the
    tool cache: the list of wheels and the wheels alike. Only the lock decides."""
    marker = tmp_path / "the-planted-code-ran"
    wheels = tmp_path / "cache" / "ci-budget" / "wheels"
    wheels.mkdir(parents=True)
    name = {"edited": "pytest_reportlog-1.0.0-py3-none-any.whl", "added": "zz-1.0-py3-none-any.whl",
            "named": "##[add-mask]zz-1.0-py3-none-any.whl"}  # fmt: skip
    (wheels / name[swap]).write_bytes(planted_wheel(marker))
    selection_path(tmp_path / "cache").write_text(name[swap] + "\n")
    done = setup(tmp_path, **DEAD_MIRROR)  # refused, then the download fails: no network here
    lines = done.stdout.splitlines()
    why = {
        "edited": "pytest_reportlog-1.0.0-py3-none-any.whl: sha256 ",
        "added": "zz 1.0 is not in",
        "named": "(#\u200b#[add-mask]zz-1.0-py3-none-any.whl: ",  # never a workflow command
    }
    assert lines[0].startswith("::warning title=ci-budget setup::a cached wheel does not match")
    assert why[swap] in lines[0] and "##[" not in done.stdout
    assert lines[-1].startswith("::error title=ci-budget setup::pip could not download")
    assert done.returncode == 1 and not (tmp_path / "out").exists()
    assert not marker.exists(), "the planted code ran"
    assert not list(tmp_path.glob("ci-budget-*/site")), "a refused wheel was unpacked"


def unpack(tmp_path: Path, lock: str, names: list[str]) -> subprocess.CompletedProcess:
    (tmp_path / "lock.txt").write_text(lock)
    (tmp_path / "selection").write_text("\n".join(names) + "\n")
    argv = [tmp_path / "lock.txt", tmp_path / "wheels", tmp_path / "selection", tmp_path / "site"]
    return subprocess.run(
        [sys.executable, "-I", "-S", WHEELHOUSE, *map(str, argv)], capture_output=True, text=True
    )


def test_wheelhouse_unpacks_only_locked_bytes_as_site_packages(tmp_path):
    data = wheel(
        {
            "demo/__init__.py": "VALUE = 1\n",
            "demo-1.0.dist-info/METADATA": "Name: demo\nVersion: 1.0\n",
            "demo-1.0.data/purelib/demo_extra.py": "EXTRA = 2\n",
            "demo-1.0.data/scripts/demo": "#!/bin/sh\n",
            "../escape.py": "x = 1\n",
        }
    )
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "demo-1.0-py3-none-any.whl").write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    lock = f"demo==1.0 \\\n    --hash=sha256:{'0' * 64} \\\n    --hash=sha256:{sha}\nother==2\n"
    done = unpack(tmp_path, lock, ["demo-1.0-py3-none-any.whl"])
    assert done.returncode == 0, done.stderr
    files = sorted(str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*"))
    assert files == ["demo", "demo-1.0.dist-info", "demo-1.0.dist-info/METADATA",
                     "demo/__init__.py", "demo_extra.py"]  # fmt: skip
    assert not (tmp_path / "escape.py").exists()

    # Another version of the same project, or bytes the lock does not name: refused, no site.
    for lock_text, why in [
        (lock.replace("demo==1.0", "demo==1.1"), "demo 1.0 is not in the lock"),
        (lock.replace(sha, "1" * 64), f"sha256 {sha} is not one the lock allows"),
    ]:
        shutil.rmtree(tmp_path / "site", ignore_errors=True)
        done = unpack(tmp_path, lock_text, ["demo-1.0-py3-none-any.whl"])
        assert done.returncode == 3 and why in done.stderr
        assert done.stderr.count("\n") == 1 and not (tmp_path / "site").exists()
    done = unpack(tmp_path, lock, ["gone-1.0-py3-none-any.whl"])
    assert done.returncode == 3 and "gone 1.0 is not in the lock" in done.stderr


def _network_env() -> dict[str, str]:
    """This machine's way to the package index (mirror, proxy, certificates): a real install."""
    names = ("PIP_", "SSL_CERT", "CURL_CA", "REQUESTS_CA", "HTTP", "NO_PROXY")
    return {k: v for k, v in os.environ.items() if k.upper().startswith(names)}


@pytest.mark.slow  # downloads the run lock's wheels
def test_cached_wheels_are_used_only_while_they_match_the_lock(tmp_path):
    net = _network_env()
    first = setup(tmp_path, **net)
    assert first.returncode == 0, first.stdout + first.stderr
    assert outputs(tmp_path)["installer"] == "pip"
    again = setup(tmp_path, **net)
    assert again.returncode == 0 and outputs(tmp_path)["installer"] == "cached", again.stdout
    cli, site = outputs(tmp_path)["cli"], Path(outputs(tmp_path)["site"])
    version = subprocess.run([cli, "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("ci-budget "), version.stderr
    # The job's own folder holds the unpacked wheels and the bytecode; the cache only wheels.
    assert (site / "pydantic").is_dir() and site.parent.parent == tmp_path
    kept = {p.suffix for p in (tmp_path / "cache" / "ci-budget").rglob("*") if p.is_file()}
    assert kept == {".whl", ".wheels"}

    marker = tmp_path / "the-planted-code-ran"
    (reportlog,) = (tmp_path / "cache" / "ci-budget" / "wheels").glob("pytest_reportlog-*.whl")
    reportlog.write_bytes(planted_wheel(marker))
    third = setup(tmp_path, **net)
    assert third.returncode == 0, third.stdout + third.stderr
    (warning,) = [x for x in third.stdout.splitlines() if x.startswith("::warning")]
    assert reportlog.name in warning and "downloading the run dependencies again" in warning
    assert outputs(tmp_path)["installer"] == "pip"
    assert subprocess.run([outputs(tmp_path)["cli"], "--version"]).returncode == 0
    assert not marker.exists(), "the planted code ran"


def test_wheels_and_lists_unused_for_30_days_leave_the_tool_cache(tmp_path):
    cache = tmp_path / "cache" / "ci-budget"
    (cache / "wheels").mkdir(parents=True)
    old = (time.time() - 40 * 86400,) * 2

    def put(path: Path, text: str, aged: bool) -> Path:
        path.write_text(text)
        if aged:
            os.utime(path, old)
        return path

    ours = put(selection_path(tmp_path / "cache"), "in-use-1.0-py3-none-any.whl\n", aged=True)
    put(cache / "full-stale-py3.11-x86_64.wheels", "stale-1.0-py3-none-any.whl\n", aged=True)
    put(cache / "full-fresh-py3.11-x86_64.wheels", "named-1.0-py3-none-any.whl\n", aged=False)
    for name, aged in [("in-use", True), ("stale", True), ("named", True), ("orphan", True),
                       ("new", False)]:  # fmt: skip
        put(cache / "wheels" / f"{name}-1.0-py3-none-any.whl", "x", aged)
    setup(tmp_path, **DEAD_MIRROR)  # the list in use does not match the lock: refused, no network
    assert sorted(p.name for p in cache.glob("*.wheels")) == [
        "full-fresh-py3.11-x86_64.wheels", ours.name
    ]  # fmt: skip
    assert sorted(p.name.split("-1.0")[0] for p in (cache / "wheels").iterdir()) == [
        "in-use", "named", "new"
    ]  # fmt: skip
