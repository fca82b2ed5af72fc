"""On a real sglang checkout (`python -m benchmarks --sglang PATH`, a git checkout of sglang).

- Registry: sglang's own `collect_tests` (its `python/sglang/test/ci/ci_register.py`, loaded by
  file path, never `import sglang`) over the registered test files, against `ci-budget scan`'s
  fast path on the same files (in-process).
- Static report of a real PR: `ci-budget diff --base HEAD~1` as a whole process in the
  checkout (HEAD is the PR's commit), against `collect_tests` reading one tree (the least sglang
  itself does to know its registry). Its output is compared with a report built from a full
  parse of every base blob and every head file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
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


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def full_parse_report(checkout: Path, base: str) -> dict:
    """The static report from a full parse of both trees: the reference both paths must equal."""
    from ci_budget.app.settings import Settings
    from ci_budget.budget.diff import build_static
    from ci_budget.registry.parse import merge, scan_source
    from ci_budget.workspace.files import guard_files
    from ci_budget.workspace.git import changed_files, list_files, read_blobs, resolve

    settings = Settings(checkout)
    config = settings.config
    commit = resolve(checkout, base)
    blobs = read_blobs(checkout, commit, list_files(checkout, commit, config))
    head_files = discover(checkout, config)
    changed = changed_files(checkout, commit)
    py = [rel for rel in changed if rel.endswith(".py") and (checkout / rel).is_file()]
    rows, problems, _ = guard_files(checkout, py, config)
    report = build_static(
        merge(scan_source(blobs[rel], rel, config) for rel in sorted(blobs)),
        merge(scan_source((checkout / rel).read_bytes(), rel, config) for rel in head_files),
        set(blobs), set(head_files), config, base_ref=base, base_commit=commit,
        arch_rows=rows, arch_problems=problems,
    )  # fmt: skip
    return json.loads(report.model_dump_json())


def _static_rows(checkout: Path, base_seconds: float, repeat: int) -> list[Row]:
    head = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h %s"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    reference = full_parse_report(checkout, "HEAD~1")
    with tempfile.TemporaryDirectory(prefix="ci-budget-sglang-") as tmp:
        argv = [sys.executable, "-m", "ci_budget.cli", "diff", "--base", "HEAD~1"]
        argv += ["--format", "json", "--out", str(Path(tmp) / "budget.md")]
        cpu = _children_cpu()

        def static():
            done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, check=True)
            return json.loads(done.stdout)

        timed = best_of(repeat, static)
    per_run = (_children_cpu() - cpu) / max(1, repeat)
    same = timed.value == reference
    note = (
        f"diff --base HEAD~1 at {head}; CPU {per_run:.2f}s per run (median wall "
        f"{timed.median:.2f}s); identical to a full parse of both trees: {same}; "
        f"load average {os.getloadavg()[0]:.1f}; baseline: collect_tests of one tree, in-process"
    )
    return [
        Row("sglang: static report of a PR", base_seconds, timed.seconds, None, note,
            limit=1.0, ok=same)
    ]  # fmt: skip


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
        *_static_rows(checkout, base.seconds, repeat),
    ]
