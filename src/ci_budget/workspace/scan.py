"""Fast registry scan: the same records and errors as parsing every file, at a fraction of the cost.

Parsing a whole test file builds thousands of AST nodes that a registry never looks at. A
registration is a top-level statement, normally right after the imports, so the fast path parses:
- the *prefix* of the file up to the end of its last column-0 `register_*_ci(` statement — a
  prefix that parses is a complete run of top-level statements, so its AST is the file's own;
- the *tail* from the last column-0 `if __name__` line, to see whether the main block runs something.
Anything the fast path cannot prove (a name or `__main__` between prefix and tail, a prefix or tail
that does not parse, no column-0 candidate) falls back to the full parse, so the output is identical
for every file that parses. The one difference, documented: a syntax error *between* the last
registration and the main block is not seen by the fast path (`ci-budget scan --full` finds it).

Files are spread over worker processes, and `cache` (a JSON file) remembers results by content hash
for repeated scans.
"""

from __future__ import annotations

import ast
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
from ci_budget.registry.parse import (
    NO_REGISTRATION,
    _FileScan,
    mentions_registration,
    merge,
    scan_source,
)

PARALLEL_MIN_FILES = 400  # below this, starting workers costs more than it saves
CACHE_VERSION = 2  # 2: entries carry size and mtime
BOM = b"\xef\xbb\xbf"


def _is_ident(c: int) -> bool:
    return c == 0x5F or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A or c >= 0x80


def _call_sites(raw: bytes, names: list[bytes]) -> list[int] | None:
    """Offsets of column-0 `NAME(` lines, or None when some other call of a name exists
    (indented, after an attribute dot, ...): then only the full parse knows what it is."""
    found = []
    for name in names:
        pos = raw.find(name)
        while pos != -1:
            end = pos + len(name)
            if (pos and _is_ident(raw[pos - 1]) and raw[:pos] != BOM) or (
                end < len(raw) and _is_ident(raw[end])
            ):
                pos = raw.find(name, end)
                continue
            after = raw[end : end + 40].lstrip()
            if after.startswith(b"("):
                before = raw[max(0, pos - 40) : pos]
                if before.endswith(b"\n") or raw[:pos] in (b"", BOM):
                    found.append(pos)
                elif not before.rstrip(b" \t").endswith(b"def"):
                    return None  # a call that is not a top-level statement, or attribute call
            pos = raw.find(name, end)
    return sorted(found)


def _statement_end(raw: bytes, start: int) -> int | None:
    """End (after the newline) of the call starting at `start`; None when unsure."""
    depth = 0
    i = raw.find(b"(", start)
    n = len(raw)
    while i < n:
        c = raw[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                nl = raw.find(b"\n", i)
                return n if nl == -1 else nl + 1
        elif c in b"'\"":
            if raw[i : i + 3] in (b'"""', b"'''"):
                return None  # a triple-quoted string inside the call: let the full parse decide
            close = raw.find(bytes([c]), i + 1)
            while close != -1 and raw[close - 1] == 0x5C:  # escaped quote
                close = raw.find(bytes([c]), close + 1)
            if close == -1:
                return None
            i = close
        elif c == 0x23:  # comment: skip to end of line
            nl = raw.find(b"\n", i)
            if nl == -1:
                return None
            i = nl
        i += 1
    return None


def scan_source_fast(raw: bytes, rel: str, config: Config) -> RegistryScan:
    """Same result as `registry.scan_source` for every file that parses, parsing only what counts."""
    if not mentions_registration(raw, config):
        scan = _FileScan(rel, config)
        scan.warn(None, NO_REGISTRATION)
        return scan.result()
    names = [n.encode() for n in config.register_functions]
    candidates = _call_sites(raw, names)
    if candidates is None:
        return scan_source(raw, rel, config)
    if not candidates:  # names only in imports, stubs or prose: no call, so no registration
        scan = _FileScan(rel, config)
        scan.warn(None, NO_REGISTRATION)
        return scan.result()
    prefix_end = _statement_end(raw, candidates[-1])
    if prefix_end is None:
        return scan_source(raw, rel, config)
    main_at = raw.rfind(b"\nif __name__")
    tail_start = main_at + 1 if main_at + 1 >= prefix_end else None
    middle = raw[prefix_end:tail_start] if tail_start is not None else raw[prefix_end:]
    if b"__main__" in middle or any(n in middle for n in names):
        return scan_source(raw, rel, config)
    try:
        prefix = ast.parse(raw[:prefix_end], filename=rel)
        tail = ast.parse(raw[tail_start:], filename=rel) if tail_start is not None else None
    except (SyntaxError, ValueError):
        return scan_source(raw, rel, config)  # the full parse reports the real error
    # Every call site of a name is a column-0 candidate, so there are no stray calls to report.
    scan = _FileScan(rel, config)
    seen = scan.top_level(prefix.body)
    if len(seen.ids) != len(candidates):  # a candidate inside brackets or a string
        return scan_source(raw, rel, config)
    if tail is not None:
        ast.increment_lineno(tail, raw.count(b"\n", 0, tail_start))
        tail_seen = scan.top_level(tail.body)
        if not tail_seen.has_main and b"__main__" in raw[:prefix_end]:
            return scan_source(raw, rel, config)
        seen.has_main = seen.has_main or tail_seen.has_main
    scan.finish(seen.has_main)
    return scan.result()


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
