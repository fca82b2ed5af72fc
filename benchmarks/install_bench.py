"""The action's set-up cost in a GPU job: step start -> the first test process running.

ci-budget: `scripts/action_setup.sh` for `run` (the hash-locked run lock into a venv cached under
RUNNER_TOOL_CACHE, no build), then `ci-budget run` of a one-file suite, until the test file's
module starts executing in its own process. Warm: the cache holds the venv (every job on a
self-hosted runner after the first). Cold: an empty cache, the package index reachable.
Baseline, measured in the same run: the set-up the action had before, a fresh
`python -m venv` + `pip install` of the action's checkout (building its wheel), then the same
`ci-budget run`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, best_of

ROOT = Path(__file__).resolve().parents[1]
TEST = """import time
from pathlib import Path
Path({stamp!r}).write_text(repr(time.time()))


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=5, suite="bench-suite")


def test_nothing():
    pass


if __name__ == "__main__":
    pass
"""


def _project(tmp: Path) -> tuple[Path, Path]:
    project = tmp / "project"
    (project / "test" / "registered").mkdir(parents=True)
    (project / ".git").mkdir()
    stamp = tmp / "first-test"
    test = project / "test" / "registered" / "test_first.py"
    test.write_text(TEST.format(stamp=str(stamp)))
    return project, stamp


def _first_test(cli: list[str], project: Path, stamp: Path, start: float, env: dict) -> float:
    stamp.unlink(missing_ok=True)
    argv = [*cli, "run", "--suite", "bench-suite", "--python", sys.executable]
    argv += ["--out", str(project.parent / "results.json")]
    subprocess.run(argv, cwd=project, env=env, capture_output=True, check=True)
    return float(stamp.read_text()) - start


def _setup(cache: Path, temp: Path, env: dict) -> list[str]:
    out = temp / "output"
    out.unlink(missing_ok=True)
    env = {**env, "ACTION_PATH": str(ROOT), "INPUT_COMMAND": "run", "GITHUB_OUTPUT": str(out)}
    env |= {"RUNNER_TOOL_CACHE": str(cache), "RUNNER_TEMP": str(temp)}
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "action_setup.sh")],
        env=env,
        capture_output=True,
        check=True,
    )
    lines = dict(line.split("=", 1) for line in out.read_text().splitlines())
    return [lines["cli"]]


def _ours(tmp: Path, project: Path, stamp: Path, env: dict, cold: bool) -> float:
    cache, temp = tmp / "tool-cache", tmp / "runner-temp"
    temp.mkdir(exist_ok=True)
    if cold:
        shutil.rmtree(cache, ignore_errors=True)
    start = time.time()
    cli = _setup(cache, temp, env)
    return _first_test(cli, project, stamp, start, env)


def _baseline(tmp: Path, project: Path, stamp: Path, env: dict) -> float:
    venv = tmp / "old-venv"
    shutil.rmtree(venv, ignore_errors=True)
    start = time.time()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--disable-pip-version-check", str(ROOT)], check=True, env=env)
    return _first_test([str(venv / "bin" / "ci-budget")], project, stamp, start, env)


def run(repeat: int = 3, baseline: bool = True) -> list[Row]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    installer = "uv" if shutil.which("uv", path=env.get("PATH")) else "pip"
    with tempfile.TemporaryDirectory(prefix="ci-budget-install-") as tmp_name:
        tmp = Path(tmp_name)
        project, stamp = _project(tmp)
        cold = best_of(repeat, lambda: _ours(tmp, project, stamp, env, cold=True))
        warm = best_of(repeat, lambda: _ours(tmp, project, stamp, env, cold=False))
        old = best_of(repeat, lambda: _baseline(tmp, project, stamp, env)) if baseline else None
    old_s = old.seconds if old else None
    note = f"installer: {installer}; baseline: venv + pip install of the action checkout"
    return [
        Row("install: GPU job, warm cache: step start -> first test", old_s, warm.seconds,
            None, note, limit=2.0),
        Row("install: GPU job, cold cache: step start -> first test", old_s, cold.seconds,
            None, "package index reachable", limit=6.0),
    ]  # fmt: skip
