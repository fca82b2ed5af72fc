"""Registry scan of a tree: discovery, worker processes, and a content-hash cache.

Files are parsed by `registry.fast.scan_source_fast` (or `scan_source` with `full`), spread over
worker processes; `cache` (a JSON file) remembers results by content hash for repeated scans.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ci_budget.config import Config
from ci_budget.models import Problem, RegistryScan
from ci_budget.registry.fast import scan_source_fast
from ci_budget.registry.parse import merge, scan_source

PARALLEL_MIN_FILES = 400  # below this, starting workers costs more than it saves
CACHE_VERSION = 2  # 2: entries carry size and mtime


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


def scan_paths(
    root: Path,
    rels: list[str],
    config: Config,
    *,
    full: bool = False,
    jobs: int | None = None,
    cache: Path | None = None,
) -> RegistryScan:
    """Scan files under `root`, in order, on `jobs` processes, reusing `cache` when given."""
    store = _Cache(cache, config, full) if cache is not None else None
    results: dict[str, RegistryScan] = {}
    todo = rels
    if store is not None:
        todo = []
        for rel in rels:
            hit = store.get(root, rel)
            if hit is None:
                todo.append(rel)
            else:
                results[rel] = hit
    workers = _jobs(jobs, len(todo))
    if workers == 1:
        for rel in todo:
            results[rel] = _scan_one(root, rel, config, full)
    else:
        size = max(1, len(todo) // (workers * 4))
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        data = config.model_dump(by_alias=False)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            batches = pool.map(_worker, [(str(root), c, data, full) for c in chunks])
            for chunk, dumps in zip(chunks, batches, strict=True):
                for rel, dump in zip(chunk, dumps, strict=True):
                    results[rel] = RegistryScan.model_validate(dump)
    if store is not None:
        for rel in todo:
            store.put(rel, results[rel])
        store.save()
    return merge(results[rel] for rel in rels)


class _Cache:
    """{rel: [size, mtime_ns, blake2b of content, scan]} for one config; a config change empties
    it. A file whose size and mtime match is not read at all; one modified within two seconds of
    the cache's own write is hashed anyway (its mtime could hide a same-size edit, as in git's
    racy-index rule). The file is rewritten only when something changed."""

    RACY_NS = 2_000_000_000

    def __init__(self, path: Path, config: Config, full: bool):
        self.path = path
        self.key = hashlib.blake2b(
            (config.model_dump_json() + str(full) + str(CACHE_VERSION)).encode(), digest_size=16
        ).hexdigest()
        self.entries: dict[str, list] = {}
        self.fresh: dict[str, list] = {}  # rel -> [size, mtime_ns, digest] read this time
        self.written_ns = 0
        self.dirty = False
        try:
            data = json.loads(path.read_text())
            if data.get("key") == self.key:
                self.entries = data["entries"]
                self.written_ns = int(data.get("written_ns", 0))
        except (OSError, ValueError, KeyError, AttributeError, TypeError):
            pass  # no cache, or an unreadable one: scan afresh

    def get(self, root: Path, rel: str) -> RegistryScan | None:
        entry = self.entries.get(rel)
        try:
            stat = (root / rel).stat()
            if (
                entry
                and len(entry) == 4
                and entry[:2] == [stat.st_size, stat.st_mtime_ns]
                and stat.st_mtime_ns < self.written_ns - self.RACY_NS
            ):
                return RegistryScan.model_validate(entry[3])
            digest = hashlib.blake2b((root / rel).read_bytes(), digest_size=16).hexdigest()
        except OSError:
            return None
        self.fresh[rel] = [stat.st_size, stat.st_mtime_ns, digest]
        if entry and len(entry) == 4 and entry[2] == digest:
            if entry[:2] != self.fresh[rel][:2]:
                entry[:2] = self.fresh[rel][:2]  # touched, same content: remember the new stat
                self.dirty = True
            return RegistryScan.model_validate(entry[3])
        return None

    def put(self, rel: str, scan: RegistryScan) -> None:
        if rel in self.fresh:
            self.entries[rel] = [*self.fresh[rel], scan.model_dump()]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        data = {"key": self.key, "written_ns": time.time_ns(), "entries": self.entries}
        tmp.write_text(json.dumps(data))
        tmp.replace(self.path)


def _excluded(rel: str, config: Config) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(rel, pat) for pat in config.exclude)


def discover(root: Path, config: Config) -> list[str]:
    """Repo-relative paths of test files, sorted, duplicates removed."""
    found: set[str] = set()
    for pattern in config.test_globs:
        for path in root.glob(pattern):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                if not _excluded(rel, config):
                    found.add(rel)
    return sorted(found)


def scan_files(
    root: Path, rels: Iterable[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> RegistryScan:
    """Scan the given repo-relative files (the fast path, on all cores)."""
    return scan_paths(root, list(rels), config, full=full, jobs=jobs)


def scan_tree(root: Path, config: Config, **kwargs) -> RegistryScan:
    """Scan every test file under `root` that the config's globs select."""
    return scan_files(root, discover(root, config), config, **kwargs)
