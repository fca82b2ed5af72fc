"""The exit status, the files run and the TIMINGS block of `ci-budget run` against the
checkout's `run_suite.py`, on a small tree made of the checkout's own `test/run_suite.py`,
`ci_register.py` and `ci_utils.py` (copied, not changed) and three test files written here: one
passes, one fails, one hangs. Each case runs both for real, as a stage job would (`cd test`,
fail-fast unless `--continue-on-error`, a short `--timeout-per-file`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conformance.harness.run_suite_ref import run_reference

SCRIPTS = ("test/run_suite.py", "python/sglang/test/ci/ci_register.py",
           "python/sglang/test/ci/ci_utils.py")  # fmt: skip
SUITE = "base-b-test-1-gpu-large"
LIMIT = "4"  # seconds per file: the hanging file is stopped here

_FILE = """import time
import unittest


def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")


class TestIt(unittest.TestCase):
    def test_it(self):
        {body}


if __name__ == "__main__":
    unittest.main()
"""
BODIES = {
    "test_passes.py": (30, "self.assertTrue(True)"),
    "test_fails.py": (20, "self.assertEqual(1, 2)"),
    "test_hangs.py": (25, "time.sleep(600)"),
    "test_later.py": (10, "self.assertTrue(True)"),
}
CASES = {
    "a failing file, fail-fast": ["test_passes.py", "test_fails.py", "test_later.py"],
    "a failing file, --continue-on-error": ["test_passes.py", "test_fails.py", "test_later.py"],
    "a hanging file, fail-fast": ["test_passes.py", "test_hangs.py", "test_later.py"],
}


def build(source: Path, dest: Path, files: list[str]) -> Path:
    for rel in SCRIPTS:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, dest / rel)
    registered = dest / "test" / "registered"
    registered.mkdir(parents=True, exist_ok=True)
    for name in files:
        est, body = BODIES[name]
        (registered / name).write_text(_FILE.format(est=est, body=body), encoding="utf-8")
    return dest


def timings(output: str) -> list[dict]:
    """The TIMINGS block's records (the last block in the output)."""
    lines = output.splitlines()
    begins = [i for i, line in enumerate(lines) if "TIMINGS BEGIN" in line]
    if not begins:
        return []
    out = []
    for line in lines[begins[-1] + 1 :]:
        if "TIMINGS END" in line:
            break
        out.append(json.loads(line[line.index("{") :]))
    return out


def _argv(case: str) -> list[str]:
    argv = ["--hw", "cuda", "--suite", SUITE, "--auto-partition-id", "0",
            "--auto-partition-size", "1", "--timeout-per-file", LIMIT]  # fmt: skip
    return argv + (["--continue-on-error"] if "continue" in case else [])


def run_case(source: Path, work: Path, case: str) -> dict:
    """Both sides of one case: {"sglang": {...}, "ci-budget": {...}}, each with its exit
    status and TIMINGS records."""
    # run_suite.py writes TIMINGS paths from the last `/sglang/` on: a CI checkout's layout
    root = build(source, work / "sglang", CASES[case])
    argv = _argv(case)
    records, output = run_reference(root, [argv], listing=False)
    theirs = {"exit": records[-1]["exit"], "timings": timings(output)}
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), *argv,
         "--out", str(work / "results.json")],
        cwd=root / "test", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    mine = {"exit": done.returncode, "timings": timings(done.stdout)}
    return {"sglang": theirs, "ci-budget": mine}


def agree(result: dict) -> str | None:
    """None when both sides fail or pass alike and ran the same files with the same verdicts
    (elapsed within 2 s: the same wall clock, measured twice), else what differs."""
    a, b = result["sglang"], result["ci-budget"]
    if (a["exit"] == 0) != (b["exit"] == 0):
        return f"exit status: sglang {a['exit']}, ci-budget {b['exit']}"
    key = [(t["file"], t["passed"]) for t in a["timings"]]
    if key != [(t["file"], t["passed"]) for t in b["timings"]]:
        return f"TIMINGS: sglang {a['timings']}, ci-budget {b['timings']}"
    for x, y in zip(a["timings"], b["timings"], strict=True):
        if abs(x["elapsed"] - y["elapsed"]) > 2:
            return f"{x['file']}: elapsed sglang {x['elapsed']}, ci-budget {y['elapsed']}"
    return None
