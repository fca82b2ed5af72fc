"""Registry scan on a generated sglang-shaped tree.

Baseline: read and `ast.parse` every file, one after the other, and walk it for registrations
(what sglang's `collect_tests` does). ci-budget: the fast scan (prefix + tail parse, all cores),
cold and with a warm content-hash cache. The two scans' results are compared in full.
"""

from __future__ import annotations

import ast
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, best_of, peak_rss_mb
from benchmarks.gentree import make_tree
from ci_budget.config import Config
from ci_budget.scanner import scan_paths


def _baseline(root: Path, rels: list[str]) -> int:
    names = set(Config().register_functions)
    found = 0
    for rel in rels:
        tree = ast.parse((root / rel).read_bytes(), filename=rel)
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id in names
            ):
                found += 1
        for _ in ast.walk(tree):  # sglang's visitor also visits the whole tree
            pass
    return found


def run(files: int = 20_000, repeat: int = 3, baseline_repeat: int = 1) -> list[Row]:
    config = Config()
    with tempfile.TemporaryDirectory(prefix="ci-budget-bench-") as tmp:
        root = Path(tmp) / "repo"
        t0 = time.perf_counter()
        rels = make_tree(root, files)
        generated = time.perf_counter() - t0
        size_mb = sum((root / r).stat().st_size for r in rels) / 1e6
        base = best_of(baseline_repeat, lambda: _baseline(root, rels))
        full = best_of(baseline_repeat, lambda: scan_paths(root, rels, config, full=True, jobs=1))
        fast = best_of(repeat, lambda: scan_paths(root, rels, config))
        cache = Path(tmp) / "cache.json"
        scan_paths(root, rels, config, cache=cache)
        warm = best_of(repeat, lambda: scan_paths(root, rels, config, cache=cache))
        reference = scan_paths(root, rels, config, full=True, jobs=1)
        identical = scan_paths(root, rels, config) == reference
        identical_warm = scan_paths(root, rels, config, cache=cache) == reference
        note = (
            f"{files} files, {size_mb:.0f} MB (generated in {generated:.0f}s); "
            f"{len(reference.registrations)} registrations, {len(reference.errors)} errors, "
            f"{len(reference.warnings)} warnings; identical: cold {identical}, warm {identical_warm}"
        )
        mem = peak_rss_mb()
        return [
            Row(
                "registry scan: full parse, ci-budget rules (1 core)",
                base.seconds,
                full.seconds,
                mem,
                note,
                target=None,
            ),
            Row(
                "registry scan: fast, all cores (cold)",
                base.seconds,
                fast.seconds,
                mem,
                "",
                target=20.0,
                ok=identical,
            ),
            Row(
                "registry scan: fast + content cache (warm)",
                base.seconds,
                warm.seconds,
                mem,
                "",
                target=20.0,
                ok=identical_warm,
            ),
        ]
