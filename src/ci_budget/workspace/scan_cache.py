"""Scan caches: a repeated scan reads and parses only the files that changed.

- `StatCache` (`ci-budget scan --cache`): by path, trusting (size, mtime_ns) before reading.
- `BlobCache` (`diff --cache`): by git object id and path. git names every file's
  content at a commit without reading it (`git ls-tree`), so an unchanged file costs a lookup.

A cache holds results for one configuration (a config change empties it). An entry that does not
validate, or whose records name another file, is ignored and scanned afresh.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from pydantic import ValidationError

from ci_budget.config import Config
from ci_budget.models import RegistryScan
from ci_budget.workspace.sources import write_source

STAT_VERSION = 2  # 2: entries carry size and mtime
BLOB_VERSION = 1


def config_key(config: Config, *extra: object) -> str:
    text = config.model_dump_json() + "".join(map(str, extra))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _load(path: Path, key: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and data.get("key") == key else {}
    except (OSError, ValueError, RecursionError):
        return {}  # no cache, or an unreadable one: scan afresh


def _write(path: Path, data: dict) -> None:
    write_source(path, json.dumps(data, separators=(",", ":")))


def _valid(dump: object, rel: str) -> RegistryScan | None:
    try:
        scan = RegistryScan.model_validate(dump)
    except ValidationError:
        return None
    items = (*scan.registrations, *scan.errors, *scan.warnings)
    return scan if all(item.file == rel for item in items) else None


class StatCache:
    """{rel: [size, mtime_ns, blake2b of content, scan]}. A file whose size and mtime match is
    not read at all; one modified within two seconds of the cache's own write is hashed anyway
    (its mtime could hide a same-size edit, as in git's racy-index rule). The file is rewritten
    only when something changed."""

    RACY_NS = 2_000_000_000

    def __init__(self, path: Path, config: Config, full: bool):
        self.path = path
        self.key = config_key(config, full, STAT_VERSION)
        data = _load(path, self.key)
        entries, written = data.get("entries"), data.get("written_ns", 0)
        self.entries: dict[str, list] = entries if isinstance(entries, dict) else {}
        self.written_ns = written if isinstance(written, int) else 0
        self.fresh: dict[str, list] = {}  # rel -> [size, mtime_ns, digest] read this time
        self.dirty = False

    def get(self, root: Path, rel: str) -> RegistryScan | None:
        entry = self.entries.get(rel)
        entry = entry if isinstance(entry, list) and len(entry) == 4 else None
        try:
            stat = (root / rel).stat()
            if (
                entry
                and entry[:2] == [stat.st_size, stat.st_mtime_ns]
                and stat.st_mtime_ns < self.written_ns - self.RACY_NS
            ):
                hit = _valid(entry[3], rel)
                if hit is not None:
                    return hit
            digest = hashlib.blake2b((root / rel).read_bytes(), digest_size=16).hexdigest()
        except OSError:
            return None
        self.fresh[rel] = [stat.st_size, stat.st_mtime_ns, digest]
        if entry and entry[2] == digest and (hit := _valid(entry[3], rel)) is not None:
            if entry[:2] != self.fresh[rel][:2]:
                entry[:2] = self.fresh[rel][:2]  # touched, same content: remember the new stat
                self.dirty = True
            return hit
        return None

    def put(self, rel: str, scan: RegistryScan) -> None:
        if rel in self.fresh:
            self.entries[rel] = [*self.fresh[rel], scan.model_dump()]
            self.dirty = True

    def save(self) -> None:
        if self.dirty:
            _write(
                self.path, {"key": self.key, "written_ns": time.time_ns(), "entries": self.entries}
            )


class BlobCache:
    """{"MODE OBJECT-ID PATH": scan}: MODE is `fast` or `full` (the two parsers agree on every
    file that parses; a cache never mixes them). Saving keeps only the entries this run used,
    so the file holds about one tree's worth, and writes nothing when nothing was added."""

    def __init__(self, path: Path, config: Config):
        self.path = path
        self.key = config_key(config, BLOB_VERSION)
        entries = _load(path, self.key).get("entries")
        self.entries: dict[str, object] = entries if isinstance(entries, dict) else {}
        self.used: set[str] = set()
        self.dirty = False

    def get(self, mode: str, blob: str, rel: str) -> RegistryScan | None:
        key = f"{mode} {blob} {rel}"
        dump = self.entries.get(key)
        scan = _valid(dump, rel) if dump is not None else None
        if scan is not None:
            self.used.add(key)
        return scan

    def put(self, mode: str, blob: str, rel: str, scan: RegistryScan) -> None:
        key = f"{mode} {blob} {rel}"
        self.entries[key] = scan.model_dump(exclude_defaults=True)
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            kept = {k: v for k, v in self.entries.items() if k in self.used}
            _write(self.path, {"key": self.key, "entries": kept})
