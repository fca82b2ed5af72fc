"""The action's set-up cost in a GPU job: step start -> the first test process running.

ci-budget: `scripts/action_setup.sh` for `run` (the run lock's wheels, kept in RUNNER_TOOL_CACHE,
checked against the action's lock and unpacked into the job's own folder; no venv, no build),
then `ci-budget run` of a one-file suite, until the test file's module starts executing in its
own process. Warm: the tool cache holds the wheels (every job on a self-hosted runner after the
first; each job still checks and unpacks them, and compiles what it imports). Cold: empty tool
and pip caches, the package index reachable (pip downloads the locked wheels). Baseline,
measured once in the same run (it takes the longest): a fresh `python -m venv` + `pip install`
of the action's checkout (building its wheel) with an empty pip cache, then the same
`ci-budget run`.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, Timing

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


def _setup(cache: Path, temp: Path, env: dict) -> tuple[list[str], str]:
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
    return [lines["cli"]], lines["installer"].split(" ")[0]


def _fresh_caches(tmp: Path, env: dict) -> dict:
    """An empty tool cache and an empty pip download cache: a runner's first job."""
    for name in ("tool-cache", "pip-cache"):
        shutil.rmtree(tmp / name, ignore_errors=True)
    return {**env, "PIP_CACHE_DIR": str(tmp / "pip-cache")}


def _ours(tmp: Path, project: Path, stamp: Path, env: dict, cold: bool, used: list) -> float:
    cache, temp = tmp / "tool-cache", tmp / "runner-temp"
    temp.mkdir(exist_ok=True)
    if cold:
        env = _fresh_caches(tmp, env)
    start = time.time()
    cli, installer = _setup(cache, temp, env)
    used.append(installer)
    return _first_test(cli, project, stamp, start, env)


def _baseline(tmp: Path, project: Path, stamp: Path, env: dict) -> float:
    env = _fresh_caches(tmp, env)
    venv = tmp / "old-venv"
    shutil.rmtree(venv, ignore_errors=True)
    start = time.time()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--disable-pip-version-check", str(ROOT)], check=True, env=env)
    return _first_test([str(venv / "bin" / "ci-budget")], project, stamp, start, env)


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _timed(repeat: int, fn) -> tuple[Timing, float]:
    """Best of `repeat` of what `fn` returns (step start -> first test, not the run to its
    end) and the CPU seconds (every process, the whole run) of one run, on average."""
    before = _cpu()
    seconds = [fn() for _ in range(max(1, repeat))]
    timing = Timing(min(seconds), statistics.median(seconds), None)
    return timing, (_cpu() - before) / max(1, repeat)


def run(repeat: int = 3, baseline: bool = True) -> list[Row]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_BUDGET_"))}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ci-budget-install-") as tmp_name:
        tmp = Path(tmp_name)
        project, stamp = _project(tmp)
        used: list[str] = []
        cold, cold_cpu = _timed(repeat, lambda: _ours(tmp, project, stamp, env, True, used))
        warm, warm_cpu = _timed(repeat, lambda: _ours(tmp, project, stamp, env, False, used))
        old, old_cpu = _timed(1, lambda: _baseline(tmp, project, stamp, env)) if baseline else (
            None, 0.0)  # fmt: skip
    old_s = old.seconds if old else None
    base = f"baseline (once, {old_cpu:.1f}s CPU): fresh venv + pip install of the action checkout"
    rows = [
        Row("install: GPU job, warm cache: step start -> first test", old_s, warm.seconds,
            None, f"{warm_cpu:.2f}s CPU; load {load:.1f} at start; {base}", limit=2.0),
        Row("install: GPU job, cold cache: step start -> first test", old_s, cold.seconds,
            None, f"{cold_cpu:.2f}s CPU; {used[0]} download; empty tool and pip caches; "
            "package index reachable", limit=6.0),
    ]  # fmt: skip
    return rows
