"""The report's `.json` copy is written a budget line at a time and holds exactly what the
report model holds; `report --format json` prints the same text the file gets."""

from __future__ import annotations

import json
import subprocess
import sys

from ci_budget.budget.status import build_report
from ci_budget.config import Config
from ci_budget.models import ClassTiming, FileResult, Registration, RunResults, TestTiming
from ci_budget.render.text import json_chunks

SUITE = "base-b-test-1-gpu-large"


def _report(files: int):
    regs, results = [], []
    for i in range(files):
        path = f"test/registered/test_{i}.py"
        regs.append(
            Registration(file=path, line=3, function="register_cuda_ci", backend="cuda",
                         est_time=100.0, suite=SUITE, stage="base-b", runner_config="1-gpu-large")
        )  # fmt: skip
        cases = [
            TestTiming(nodeid=f"{path}::TestA::test_{k}", call=1.5 * k, message='a "quote"\n::x')
            for k in range(3)
        ]
        results.append(
            FileResult(path=path, suite=SUITE, elapsed=20.0 + i, status="passed",
                       classes=[ClassTiming(name=f"{path}::TestA", total=4.5, test_cases=cases)])
        )  # fmt: skip
    return build_report(regs, [RunResults(files=results)], Config())


def test_streamed_json_is_the_model_dump():
    for files in (0, 1, 3):
        report = _report(files)
        pieces = list(json_chunks(report))
        assert json.loads("".join(pieces)) == json.loads(report.model_dump_json()), files
        assert len(pieces) == files + 2  # a budget line per piece, never the whole text
        assert all(piece.endswith("\n") for piece in pieces)


def test_format_json_prints_the_file_copy(tmp_path):
    (tmp_path / ".git").mkdir()
    test = tmp_path / "test" / "registered" / "test_a.py"
    test.parent.mkdir(parents=True)
    test.write_text(f'register_cuda_ci(est_time=60, suite="{SUITE}")\n')
    report = {
        "tests": [
            {"nodeid": "test/registered/test_a.py::TestA::test_x", "outcome": "passed",
             "setup": {"duration": 0.5, "outcome": "passed"},
             "call": {"duration": 30.0, "outcome": "passed"},
             "teardown": {"duration": 0.1, "outcome": "passed"}},
        ]
    }  # fmt: skip
    (tmp_path / "report.json").write_text(json.dumps(report))
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--json-report", "report.json",
         "--format", "json", "--out", "out/r.md"],
        cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    copy = (tmp_path / "out" / "r.json").read_text()
    assert done.stdout == copy
    data = json.loads(copy)
    assert [line["file"] for line in data["lines"]] == ["test/registered/test_a.py"]
    assert data["lines"][0]["classes"][0]["test_cases"][0]["call"] == 30.0
