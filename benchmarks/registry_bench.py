"""Registry scan on a generated sglang-shaped tree.

Baseline: read and `ast.parse` every file, one after the other, and nothing else: the least any
tool that parses the files (sglang's `collect_tests` among them) must do. ci-budget: the fast scan
(prefix + tail parse, all cores), compared in full (records, errors and warnings) with
ci-budget's full parse of every file, which is run once, untimed, as the reference.
"""

from __future__ import annotations

import ast
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, best_of, peak_rss_mb
from benchmarks.gentree import make_tree
from ci_budget.config import Config
from ci_budget.workspace.scan import scan_paths


def plain_parse(root: Path, rels: list[str]) -> int:
    """The baseline: every file read and parsed by `ast.parse`, one after the other."""
    for rel in rels:
        ast.parse((root / rel).read_text(encoding="utf-8"))
    return len(rels)


def run(files: int = 20_000, repeat: int = 3, baseline_repeat: int = 1) -> list[Row]:
    config = Config()
    with tempfile.TemporaryDirectory(prefix="ci-budget-bench-") as tmp:
        root = Path(tmp) / "repo"
        t0 = time.perf_counter()
        rels = make_tree(root, files)
        generated = time.perf_counter() - t0
        size_mb = sum((root / r).stat().st_size for r in rels) / 1e6
        base = best_of(baseline_repeat, lambda: plain_parse(root, rels))
        reference = scan_paths(root, rels, config, full=True, jobs=1)
        fast = best_of(repeat, lambda: scan_paths(root, rels, config))
        identical = fast.value == reference
        note = (
            f"{files} files, {size_mb:.0f} MB (generated in {generated:.0f}s); "
            f"{len(reference.registrations)} registrations, {len(reference.errors)} errors, "
            f"{len(reference.warnings)} warnings; identical to the full parse: {identical}; "
            f"baseline: plain ast.parse of every file, one core"
        )
        mem = peak_rss_mb()
        return [
            Row("registry scan: fast, all cores (cold)", base.seconds, fast.seconds, mem, note,
                target=20.0, ok=identical),
        ]  # fmt: skip
