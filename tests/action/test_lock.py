"""The action installs only from hash-locked files that match pyproject.toml."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)(?: ; (.+?))? \\$")


def locked(name: str) -> dict[str, tuple[str, str | None, int]]:
    """package -> (version, marker, number of hashes)."""
    out: dict[str, tuple[str, str | None, int]] = {}
    current = None
    for line in (ROOT / "requirements" / f"{name}.txt").read_text().splitlines():
        match = PIN.match(line)
        if match:
            current = match.group(1).lower()
            out[current] = (match.group(2), match.group(3), 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, marker, hashes = out[current]
            out[current] = (version, marker, hashes + 1)
        elif line and not line.lstrip().startswith("#"):
            raise AssertionError(f"requirements/{name}.txt: unexpected line {line!r}")
    return out


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "lock.py"), "--check"],
        capture_output=True,
        text=True,
    )


def test_locks_match_pyproject():
    done = check(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_locked_package_is_pinned_with_hashes():
    for name in ("full", "run"):
        packages = locked(name)
        assert packages, name
        for package, (version, _, hashes) in packages.items():
            assert hashes >= 1, f"{name}: {package}=={version} has no hash"


def test_run_lock_leaves_out_the_github_client_and_pytest():
    full, run = locked("full"), locked("run")
    for package in ("pygithub", "requests", "cryptography", "pynacl", "pyjwt"):
        assert package in full
        assert package not in run
    # pytest comes from the tests' own interpreter: in the run lock only under a never-true marker
    assert run["pytest"][1] == "sys_platform == 'never'"
    for package in ("pydantic", "pydantic-core", "pytest-json-report", "pytest-reportlog"):
        assert run[package][1] is None, package


def test_a_changed_dependency_makes_the_lock_stale(tmp_path):
    for name in ("scripts", "requirements"):
        shutil.copytree(ROOT / name, tmp_path / name)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"requests>=2.31",' in pyproject
    (tmp_path / "pyproject.toml").write_text(
        pyproject.replace('"requests>=2.31",', '"requests>=2.32",')
    )
    done = check(tmp_path)
    assert done.returncode == 1
    assert "requirements/full.txt is stale: run python scripts/lock.py" in done.stdout
    assert "run.txt" not in done.stdout  # requests is not in the run lock's inputs
