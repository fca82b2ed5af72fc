"""Reading a partition model file (sglang-ci-stats' model.json)."""

from __future__ import annotations

import json
from pathlib import Path

from ci_budget.sharding.model import PartitionModel, parse_model


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
