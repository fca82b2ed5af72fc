"""Registry scan of a tree: discovery and worker processes.

Files are parsed by `registry.fast.scan_source_fast` (or `scan_source` with `full`), spread over
worker processes when there are enough of them.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ci_budget.config import Config
from ci_budget.models import Problem, RegistryScan
from ci_budget.registry.fast import scan_source_fast
from ci_budget.registry.parse import merge, scan_source
from ci_budget.workspace.git import excluded

PARALLEL_MIN_FILES = 400  # below this, starting workers costs more than it saves


def _scan_one(root: Path, rel: str, config: Config, full: bool) -> RegistryScan:
    try:
        raw = (root / rel).read_bytes()
    except OSError as exc:
        return RegistryScan(errors=[Problem(file=rel, message=f"cannot read: {exc.strerror}")])
    return (scan_source if full else scan_source_fast)(raw, rel, config)


def _worker(args: tuple[str, list[str], dict, bool]) -> list[dict]:
    root, rels, config_data, full = args
    config = Config.model_validate(config_data)
    return [_scan_one(Path(root), rel, config, full).model_dump() for rel in rels]


def _jobs(requested: int | None, files: int) -> int:
    if files < PARALLEL_MIN_FILES:
        return 1
    if requested:
        return max(1, requested)
    return max(1, min(os.cpu_count() or 1, 8))


def scan_each(
    root: Path, rels: list[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> dict[str, RegistryScan]:
    """{rel: its scan} of files under `root`, on `jobs` processes."""
    results: dict[str, RegistryScan] = {}
    workers = _jobs(jobs, len(rels))
    if workers == 1:
        for rel in rels:
            results[rel] = _scan_one(root, rel, config, full)
        return results
    size = max(1, len(rels) // (workers * 4))
    chunks = [rels[i : i + size] for i in range(0, len(rels), size)]
    data = config.model_dump(by_alias=False)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        batches = pool.map(_worker, [(str(root), c, data, full) for c in chunks])
        for chunk, dumps in zip(chunks, batches, strict=True):
            for rel, dump in zip(chunk, dumps, strict=True):
                results[rel] = RegistryScan.model_validate(dump)
    return results


def scan_paths(
    root: Path, rels: list[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> RegistryScan:
    """Scan files under `root`, in order, on `jobs` processes."""
    results = scan_each(root, rels, config, full=full, jobs=jobs)
    return merge(results[rel] for rel in rels)


def _walk(top: str, rel: str, name: str, deep: bool, out: list[str]) -> None:
    """Files named like `name` in `top` (and, `deep`, in every folder below it that is not a
    symbolic link: `**` as `Path.glob` reads it), as `rel` + their path."""
    try:
        with os.scandir(top) as found:
            entries = list(found)
    except OSError:
        return
    for entry in entries:
        if fnmatch.fnmatchcase(entry.name, name) and entry.is_file():
            out.append(rel + entry.name)
        if deep and entry.is_dir() and not entry.is_symlink():
            _walk(entry.path, f"{rel}{entry.name}/", name, deep, out)


def glob_files(root: Path, pattern: str) -> list[str]:
    """Repo-relative paths of the files `root.glob(pattern)` yields. `DIR/**/NAME` and `DIR/NAME`
    (the usual shapes) walk the folders directly, without a Path object per entry."""
    *dirs, name = pattern.split("/")
    deep = bool(dirs) and dirs[-1] == "**"
    fixed = dirs[:-1] if deep else dirs
    if "**" in name or any(set("*?[") & set(d) or d in ("", ".", "..", "**") for d in fixed):
        paths = (p for p in root.glob(pattern) if p.is_file())
        return [p.relative_to(root).as_posix() for p in paths]
    out: list[str] = []
    base = "".join(f"{d}/" for d in fixed)
    _walk(str(root / base) if base else str(root), base, name, deep, out)
    return out


def discover(root: Path, config: Config) -> list[str]:
    """Repo-relative paths of test files, sorted, duplicates removed."""
    found = {rel for pattern in config.test_globs for rel in glob_files(root, pattern)}
    return sorted(rel for rel in found if not excluded(rel, config))


def directory_order(root: Path, config: Config) -> dict[str, int]:
    """path -> rank in the order `glob.glob(..., recursive=True)` finds the test files, pattern
    after pattern: the order sglang's run_suite.py runs a suite in when it is not sharded."""
    import glob

    base = str(root)
    found: dict[str, int] = {}
    for pattern in config.test_globs:
        for path in glob.glob(os.path.join(base, pattern), recursive=True):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            found.setdefault(rel, len(found))
    return found


def scan_files(
    root: Path, rels: Iterable[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> RegistryScan:
    """Scan the given repo-relative files (the fast path, on all cores)."""
    return scan_paths(root, list(rels), config, full=full, jobs=jobs)


def scan_tree(root: Path, config: Config, **kwargs) -> RegistryScan:
    """Scan every test file under `root` that the config's globs select."""
    return scan_files(root, discover(root, config), config, **kwargs)
