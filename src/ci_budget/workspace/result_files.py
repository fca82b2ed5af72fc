"""Reading result files (ours and pytest-json-report's) and merging shards.

Every error names the file, and for schema errors the key, so a broken artifact is easy to find.
"""

from __future__ import annotations

import gc
import glob
import json
import re
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from ci_budget.models import SCHEMA_VERSION, FileResult, RunMeta, RunResults


class ResultsError(Exception):
    """A result file that cannot be used; the message names it."""


def expand(patterns: list[str]) -> list[Path]:
    """Paths and globs, in the order given; a glob matching nothing is an error, not silence."""
    out: list[Path] = []
    seen: set[Path] = set()
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise ResultsError(f"{pattern}: glob matched no files")
            paths = [Path(m) for m in matches]
        else:
            path = Path(pattern)
            if not path.exists():
                raise ResultsError(f"{pattern}: no such file")
            paths = [path]
        for path in paths:
            if path.is_dir():
                raise ResultsError(f"{path}: is a directory, expected a results JSON file")
            if path.resolve() not in seen:
                seen.add(path.resolve())
                out.append(path)
    return out


def read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not UTF-8 text, expected JSON") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None


def parse_results(data: object, source: str) -> RunResults:
    if not isinstance(data, dict):
        raise ResultsError(f"{source}: expected a JSON object, found {type(data).__name__}")
    version = data.get("schema_version")
    if version is None:
        raise ResultsError(f"{source}: no schema_version: not a ci-budget results file")
    if version != SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: schema_version {version!r} is not supported "
            f"(this ci-budget reads {SCHEMA_VERSION})"
        )
    try:
        return RunResults.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ResultsError(f"{source}: {details}") from None


def load_results(patterns: list[str]) -> list[RunResults]:
    return [parse_results(read_json(path), str(path)) for path in expand(patterns)]


def load_json_reports(patterns: list[str]) -> list[RunResults]:
    """pytest-json-report files, converted by the runner's timings module."""
    from ci_budget.results.timings import file_results_from_json_report

    out = []
    for path in expand(patterns):
        files = stream_json_report(path)
        if files is None:  # anything unusual: the whole-file path, with its exact errors
            data = read_json(path)
            if not isinstance(data, dict) or "tests" not in data and "collectors" not in data:
                raise ResultsError(f"{path}: not a pytest-json-report file (no 'tests' key)")
            try:
                files = file_results_from_json_report(data)
            except (KeyError, TypeError, ValueError) as exc:
                raise ResultsError(f"{path}: cannot read pytest-json-report data: {exc}") from None
        out.append(RunResults(meta=RunMeta(mode="pytest"), files=files))
    return out


class _NotStreamable(Exception):
    """The file is not a plain, valid report: the caller falls back to reading it whole."""


_BLANK = re.compile(r"[ \t\n\r]*")


class _Reader:
    """JSON read a chunk at a time with the stdlib decoder (so values decode exactly as
    `json.loads` would), for walking a large top-level object without holding all of it."""

    CHUNK = 1 << 20

    def __init__(self, handle):
        self.handle = handle
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _more(self, size: int) -> bool:
        if self.eof:
            return False
        chunk = self.handle.read(size)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end)."""
        while True:
            pos = self.pos = _BLANK.match(self.buf, self.pos).end()
            if pos < len(self.buf) or not self._more(self.CHUNK):
                return self.buf[pos] if pos < len(self.buf) else ""

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise _NotStreamable
        self.pos += 1

    def _maybe_cut(self, value, end: int) -> bool:
        if end >= len(self.buf):
            return True
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return number and self.buf[end] in ".eE+-0123456789"

    def value(self):
        self.peek()
        size = self.CHUNK
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                end = None
            # A number may be cut short by the buffer's end, even mid-way ("12." of "12.5"):
            # read on to be sure.
            if end is not None and (self.eof or not self._maybe_cut(value, end)):
                self.pos = end
                return value
            if not self._more(size):
                if end is None:
                    raise _NotStreamable from None
                self.pos = end
                return value
            size *= 2  # a large value: fewer, bigger reads instead of re-parsing it often


def _stream_report(reader: _Reader, files) -> None:
    reader.take("{")
    seen: set[str] = set()
    streams = {"tests": files.add_test, "collectors": files.add_collector}
    if reader.peek() == "}":
        raise _NotStreamable
    while True:
        key = reader.value()
        if not isinstance(key, str) or key in seen:
            raise _NotStreamable  # json.loads keeps the last duplicate: leave that to it
        seen.add(key)
        reader.take(":")
        add = streams.get(key)
        if add is None:
            reader.value()
        else:
            reader.take("[")
            if reader.peek() == "]":
                reader.pos += 1
            else:
                while True:
                    add(reader.value())
                    sep = reader.peek()
                    reader.take(sep if sep in ",]" else ",")
                    if sep == "]":
                        break
        sep = reader.peek()
        reader.take(sep if sep in ",}" else ",")
        if sep == "}":
            break
    if reader.peek() != "" or "tests" not in seen:
        raise _NotStreamable


@contextmanager
def _no_gc():
    """Cyclic GC off while a large report's acyclic objects are built: with it on, the
    collector rescans the growing heap over and over (a quarter of the ingest time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def stream_json_report(path: Path) -> list[FileResult] | None:
    """A pytest-json-report file's results, reading `tests[]` one item at a time and keeping
    only the timings: a whole-file `json.load` needs about 5x the file's size in memory.
    None when the file is anything but a plain valid report; the whole-file path then gives
    the same results or the exact error."""
    from ci_budget.results.timings import JsonReportFiles

    files = JsonReportFiles()
    try:
        with open(path, encoding="utf-8") as handle, _no_gc():
            _stream_report(_Reader(handle), files)
            return files.results()
    except (_NotStreamable, OSError, UnicodeDecodeError, KeyError, TypeError, ValueError):
        return None
