"""`ci-budget run` overhead against plain `python -m pytest FILE`, one file after the other.

N tiny registered test files. Baseline: `python -m pytest -q FILE` for each, sequentially.
ci-budget: `ci-budget run` over the same files (per-file process, timeout, reportlog, results
written after every file). Also: process start -> first test's start (from its reportlog start
time), and last test's end -> results file written (its mtime).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row

TEST = """\
import time
register_cuda_ci(est_time=60, suite="stage-a-test-1-gpu")


class TestTiny:
    def test_a(self):
        with open({stamp!r}, "a") as f:
            f.write(f"start {{time.time()}}\\n")
        assert 1 + 1 == 2

    def test_b(self):
        with open({stamp!r}, "a") as f:
            f.write(f"end {{time.time()}}\\n")
"""
CONFTEST = "def register_cuda_ci(**kw):\n    pass\n\n\nimport builtins\n\nbuiltins.register_cuda_ci = register_cuda_ci\n"


def run(files: int = 20) -> list[Row]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    with tempfile.TemporaryDirectory(prefix="ci-budget-run-") as tmp:
        root = Path(tmp) / "repo"
        (root / ".git").mkdir(parents=True)
        tests = root / "test" / "registered"
        tests.mkdir(parents=True)
        (root / "conftest.py").write_text(CONFTEST)
        stamp = Path(tmp) / "stamps.txt"
        rels = []
        for i in range(files):
            rel = f"test/registered/test_tiny_{i:02d}.py"
            (root / rel).write_text(TEST.format(stamp=str(stamp)))
            rels.append(rel)
        t0 = time.perf_counter()
        for rel in rels:
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", rel],
                cwd=root,
                env=env,
                capture_output=True,
                check=True,
            )
        base = time.perf_counter() - t0
        stamp.unlink()
        out = Path(tmp) / "results.json"
        started = time.time()
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root)]
            + ["--suite", "stage-a-test-1-gpu", "--out", str(out)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        ours = time.perf_counter() - t0
        results = json.loads(out.read_text()) if out.exists() else {"files": []}
        passed = sum(f.get("status") == "passed" for f in results["files"])
        stamps = stamp.read_text().split() if stamp.exists() else []
        starts = [float(v) for k, v in zip(stamps[::2], stamps[1::2], strict=True) if k == "start"]
        ends = [float(v) for k, v in zip(stamps[::2], stamps[1::2], strict=True) if k == "end"]
        to_first = min(starts) - started if starts else None
        to_written = out.stat().st_mtime - max(ends) if ends and out.exists() else None
    ok = proc.returncode == 0 and passed == files
    per_file = (ours - base) / files
    first = f"{to_first:.2f}s" if to_first is not None else "-"
    written = f"{to_written:.2f}s" if to_written is not None else "-"
    return [
        Row(
            f"runner: {files} tiny files, overhead per file vs pytest",
            None,
            per_file,
            None,
            f"plain pytest one by one {base:.2f}s, ci-budget run {ours:.2f}s, "
            f"{passed}/{files} passed; process start -> first test {first}, "
            f"last test end -> results written {written}"
            + ("" if ok else f"; run failed: {proc.stderr[-300:]}"),
            ok=ok,
            limit=0.3,
        ),
        Row(
            "runner: process start -> first test starts",
            None,
            to_first,
            None,
            "",
            limit=5.0,
        ),
        Row(
            "runner: last test ends -> results file written",
            None,
            to_written,
            None,
            "",
            limit=5.0,
        ),
    ]
