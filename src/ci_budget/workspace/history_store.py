"""The timing-history store on disk: one JSON file, read whole and written atomically."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ci_budget.history.model import (
    DEFAULT_MAX_SAMPLES,
    STORE_VERSION,
    History,
    HistoryError,
    StoreFile,
)
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
