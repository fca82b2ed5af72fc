"""The bundled example's demo shows every budget status, on a loaded machine as on an idle one.

The example's files time-box their work against their own process age, so their ratio to
est_time does not depend on the machine's speed. This runs the README's demo command for real
while extra busy processes load every core, and checks the statuses the report gives.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the example model needs numpy")

from helpers.readme import demo_args  # noqa: E402
from test_example_recorded import EXAMPLE, EXPECTED  # noqa: E402


def _at_example(args: list[str]) -> list[str]:
    """The README's arguments, its `--root examples/bitexact` made absolute (this runs in a
    temporary directory)."""
    return [str(EXAMPLE) if a == "examples/bitexact" else a for a in args]


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BITEXACT_", "GITHUB_"))}
    env["BITEXACT_BACKEND"] = "numpy"
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # about 45 s of wall time: the demo's files are time-boxed
def test_demo_statuses_hold_on_a_loaded_machine(tmp_path):
    stop = multiprocessing.Event()
    spinners = [
        multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
        for _ in range(os.cpu_count() or 2)
    ]
    for p in spinners:
        p.start()
    run_args, report_args = demo_args()
    assert "--continue-on-error" in run_args and "--out" in run_args, run_args
    try:
        run = _cli(*_at_example(run_args), cwd=tmp_path)
    finally:
        stop.set()
        for p in spinners:
            p.join(timeout=10)
    assert run.returncode == 1, run.stdout + run.stderr  # the hanging file timed out
    # The README's report, as JSON to read its statuses.
    text = report_args.index("--format")
    report_args[text : text + 2] = ["--format", "json", "--out", "report.md"]
    report = _cli(*_at_example(report_args), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    lines = json.loads(report.stdout)["lines"]
    assert {line["file"]: line["status"] for line in lines} == EXPECTED, run.stdout
    timed_out = next(line for line in lines if line["status"] == "timeout")
    assert "test_server_becomes_ready" in (timed_out.get("message") or "")
