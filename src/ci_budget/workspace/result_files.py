"""Reading result files (ours and pytest-json-report's) and merging shards.

Every error names the file, and for schema errors the key, so a broken artifact is easy to find.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

from pydantic import ValidationError

from ci_budget.models import SCHEMA_VERSION, RunMeta, RunResults


class ResultsError(Exception):
    """A result file that cannot be used; the message names it. `fields`: the schema errors
    (`key: message`), when the file is JSON of the wrong shape."""

    def __init__(self, message: str, fields: list[str] | None = None):
        super().__init__(message)
        self.fields = fields or []

    def briefly(self, path) -> str:
        """One line for commands that list many files: the first schema error, else the message."""
        return f"{path}: not a results file: {self.fields[0]}" if self.fields else str(self)


def expand(patterns: list[str], allow_empty: bool = False) -> list[Path]:
    """Paths and globs, in the order given; a glob matching nothing is an error, not silence,
    unless `allow_empty` (a report job that runs whether or not a shard ran)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for pattern in patterns:
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches and not allow_empty:
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
    except RecursionError:  # json.loads recurses once per level of nesting
        raise ResultsError(f"{path}: not a results file: JSON nested too deeply") from None


def parse_results(data: object, source: str) -> RunResults:
    """A ci-budget results file's data, checked: its schema version, then its shape."""
    if not isinstance(data, dict):
        raise ResultsError(f"{source}: expected a JSON object, found {type(data).__name__}")
    version = data.get("schema_version")
    if version is not None and version != SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: schema_version {version!r} is not supported "
            f"(this ci-budget reads {SCHEMA_VERSION})"
        )
    try:
        results = RunResults.model_validate(data)
    except ValidationError as exc:
        fields = [
            f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
            for e in exc.errors()
        ]
        raise ResultsError(f"{source}: {'; '.join(fields)}", fields) from None
    if version is None:
        raise ResultsError(f"{source}: no schema_version: not a ci-budget results file")
    return results


def read_results(path: Path) -> RunResults:
    """One results file (the path taken as it is, never as a glob)."""
    return parse_results(read_json(path), str(path))


def load_results(patterns: list[str], allow_empty: bool = False) -> list[RunResults]:
    """Results files by path or glob, in the order given."""
    return [read_results(path) for path in expand(patterns, allow_empty)]


def load_json_reports(patterns: list[str]) -> list[RunResults]:
    """pytest-json-report files, each read whole; errors name the file."""
    from ci_budget.results.timings import file_results_from_json_report

    out = []
    for path in expand(patterns):
        whole = read_json(path)
        if not isinstance(whole, dict) or "tests" not in whole and "collectors" not in whole:
            raise ResultsError(f"{path}: not a pytest-json-report file (no 'tests' key)")
        try:
            files = file_results_from_json_report(whole)
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(f"{path}: cannot read pytest-json-report data: {exc}") from None
        out.append(RunResults(meta=RunMeta(mode="pytest"), files=files))
    return out
