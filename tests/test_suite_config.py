"""The suite's own pytest configuration: `slow` tests stay out of the default run (the README's
test command) and `-m slow` runs just them (.ci/run's second step)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = """\
import pytest


def test_quick():
    pass


@pytest.mark.slow
def test_long():
    pass
"""


def _collected(tmp_path: Path, *args: str) -> list[str]:
    # The project's pytest section as it is, over a file holding one case of each kind.
    (tmp_path / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_cases.py").write_text(CASES)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_default_run_leaves_slow_tests_out_and_minus_m_slow_runs_only_them(tmp_path):
    assert _collected(tmp_path) == ["tests/test_cases.py::test_quick"]
    assert _collected(tmp_path, "-m", "slow") == ["tests/test_cases.py::test_long"]
