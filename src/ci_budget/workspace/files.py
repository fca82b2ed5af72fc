"""Files read and written in the checkout, each with one policy for bad input.

- Sources, exactly as they are: every byte a command does not change (CRLF line endings, a
  byte-order mark, trailing blanks) is written back as it was read, and a file is replaced
  whole, never left half-written.
- Guard files: read and handed to the pure `ci_budget.arch` code.
- Result files (ours and pytest-json-report's) and merged shards: every error names the file,
  and for schema errors the key, so a broken artifact is easy to find.
- The numbers' files: the timing-history store (one JSON file, read whole and written
  atomically) and the partition model (sglang-ci-stats' model.json).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from ci_budget.arch.docstrings import flagged_rows
from ci_budget.config import Config
from ci_budget.history.model import (
    DEFAULT_MAX_SAMPLES,
    STORE_VERSION,
    History,
    HistoryError,
    StoreFile,
)
from ci_budget.models import SCHEMA_VERSION, ArchRow, Problem, RunMeta, RunResults
from ci_budget.sharding.dispatch import PartitionModel, parse_model


def read_source(path: Path) -> str:
    """The file's text, line endings untranslated (OSError, UnicodeDecodeError)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return fh.read()


def write_source(path: Path, text: str) -> None:
    """`text` into `path` as given, through a temporary file beside it: a reader, or a kill
    mid-write, sees the old file or the new one. An existing file keeps its permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def inside(root: Path, rel: str) -> bool:
    """Whether `rel`, a path that data names (a results file, an artifact), is a file of the
    checkout at `root`: relative, no `..`, no link out of it."""
    if not rel or len(rel) > 4096 or "\0" in rel or rel.startswith("/") or ".." in rel.split("/"):
        return False
    try:
        path = (root / rel).resolve()
        return path.is_relative_to(root.resolve()) and path.is_file()
    except (OSError, ValueError):
        return False


def repo_relative(root: Path, path: str, cwd: Path | None = None) -> str:
    """`path` (absolute, or relative to `cwd`) relative to `root`; unchanged when outside it."""
    p = Path(path)
    p = p if p.is_absolute() else (cwd or Path.cwd()) / p
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return path


def rows_at_commit(root: Path, commit: str, rels: list[str], config: Config) -> list[ArchRow]:
    """Flagged rows of the files `rels` as they were at `commit` (a file absent there, or
    not text, has none)."""
    from ci_budget.workspace.git import read_blobs

    rows: list[ArchRow] = []
    for rel, raw in read_blobs(root, commit, rels).items():
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        rows.extend(r for r in flagged_rows(rel, source, config)[0] if r.flags)
    return rows


def guard_files(
    root: Path, rels: list[str], config: Config, ci_arch: str | None = None
) -> tuple[list[ArchRow], list[Problem], dict[str, set[str]]]:
    """(rows, problems, classes) of the repo-relative files `rels`: their flagged table rows
    (see `arch.docstrings.flagged_rows`) and the class names each file defines."""
    rows: list[ArchRow] = []
    problems: list[Problem] = []
    names: dict[str, set[str]] = {}
    for rel in rels:
        try:
            source = read_source(root / rel)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(file=rel, message=f"cannot read: {exc}"))
            continue
        found, probs, names[rel] = flagged_rows(rel, source, config, ci_arch)
        rows.extend(found)
        problems.extend(probs)
    return rows, problems, names


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


def load_history(path: Path, max_samples: int | None = None, missing_ok: bool = True) -> History:
    """Read a store; a missing file is an empty store when `missing_ok`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not missing_ok:
            raise HistoryError(f"{path}: no such history store") from None
        return History(max_samples or DEFAULT_MAX_SAMPLES)
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        store = StoreFile.model_validate_json(text)
    except ValidationError as exc:
        raise HistoryError(f"{path}: not a ci-budget history store: {_first_error(exc)}") from None
    if store.schema_version > STORE_VERSION:
        raise HistoryError(
            f"{path}: schema_version {store.schema_version} is newer than this ci-budget "
            f"understands ({STORE_VERSION})"
        )
    history = History.from_store(store)
    if max_samples is not None:
        history.max_samples = max_samples
    return history


def save_history(path: Path, history: History) -> None:
    """Write atomically: a crash mid-write never leaves a truncated store behind."""
    write_source(path, history.to_store().model_dump_json(indent=1) + "\n")


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"{where}: {err['msg']}"


def read_model(path: Path) -> tuple[PartitionModel | None, list[str]]:
    """The model at `path` and one line per problem. A file that is missing, unreadable or not
    JSON gives no model (and a line): shards are then planned as if there were none."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [f"{where}: no such file; planning on est_time"]
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return None, [f"{where}: cannot read: {reason}; planning on est_time"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [
            f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); planning on est_time"
        ]
    except RecursionError:  # json.loads recurses once per level of nesting
        return None, [f"{where}: JSON nested too deeply; planning on est_time"]
    return parse_model(data, where)
