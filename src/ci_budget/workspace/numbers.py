"""The numbers' files on disk: the timing-history store (one JSON file, read whole and written
atomically) and the partition model (sglang-ci-stats' model.json)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ci_budget.history.model import (
    DEFAULT_MAX_SAMPLES,
    STORE_VERSION,
    History,
    HistoryError,
    StoreFile,
)
from ci_budget.sharding.model import PartitionModel, parse_model
from ci_budget.workspace.sources import write_source


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
