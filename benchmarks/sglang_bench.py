"""On a real sglang checkout (`python -m benchmarks --sglang PATH`, a git checkout of sglang).

- Registry: sglang's own `collect_tests` (its `python/sglang/test/ci/ci_register.py`, loaded by
  file path, never `import sglang`) over the registered test files, against `ci-budget scan`'s
  fast path on the same files (in-process, cold, no cache).
- Static report of a real PR: `ci-budget report --base HEAD~1` as a whole process in the
  checkout (HEAD is the PR's merge commit), against `collect_tests` reading one tree (the same
  baseline: the least sglang itself does to know its registry).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from benchmarks.common import Row, best_of
from ci_budget.config import Config
from ci_budget.workspace.scan import discover, scan_files

REGISTER = "python/sglang/test/ci/ci_register.py"


def _collect_tests(checkout: Path):
    spec = importlib.util.spec_from_file_location("sglang_ci_register", checkout / REGISTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.collect_tests


def run(checkout: Path | None = None, repeat: int = 3) -> list[Row]:
    if checkout is None:
        return []
    checkout = checkout.resolve()
    collect = _collect_tests(checkout)
    config = Config()
    rels = discover(checkout, config)
    paths = [str(checkout / rel) for rel in rels]

    def theirs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return len(collect(paths, sanity_check=False))

    base = best_of(repeat, theirs)
    ours = best_of(repeat, lambda: scan_files(checkout, rels, config))
    head = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ci-budget-sglang-") as tmp:
        argv = [sys.executable, "-m", "ci_budget.cli", "report", "--base", "HEAD~1"]
        argv += ["--format", "json", "--out", str(Path(tmp) / "budget.md")]

        def static():
            return subprocess.run(argv, cwd=checkout, capture_output=True, text=True, check=True)

        report = best_of(repeat, static)
    regs = len(ours.value.registrations)
    return [
        Row(
            "sglang: registry of the checkout",
            base.seconds,
            ours.seconds,
            None,
            f"{len(rels)} files; sglang collect_tests {base.value} registrations, "
            f"ci-budget {regs} (+{len(ours.value.errors)} errors)",
        ),
        Row(
            "sglang: static report of a PR (whole process)",
            base.seconds,
            report.seconds,
            None,
            f"report --base HEAD~1 at {head}; baseline: collect_tests of one tree, in-process",
            limit=1.0,
        ),
    ]
