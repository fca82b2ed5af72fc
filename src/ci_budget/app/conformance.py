"""Use case `conformance`: run an sglang checkout's own CI scripts and compare with ci-budget."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.options import MODEL_HELP, option
from ci_budget.app.sink import Sink


@dataclass
class ConformanceOptions:
    partition_model: Path | None = option(None, metavar="FILE", help=MODEL_HELP)
    max_differences: int = option(
        40, metavar="N", help="differences listed after the table (default 40)"
    )


def _model(path: Path | None, sink: Sink):
    """(the parsed model for ci-budget, the raw JSON for sglang's scripts), or (None, None)."""
    from ci_budget.sharding.model import model_from_json

    if path is None:
        return None, None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        sink.warn(f"--partition-model {path}: {exc}; using est_time")
        return None, None
    model = model_from_json(raw)
    return (model, raw) if model is not None else (None, None)


def conformance(settings, options: ConformanceOptions, sink: Sink | None = None) -> int:
    """Print the comparison table and each difference; 1 on any difference."""
    from ci_budget.conformance.compare import compare, table
    from ci_budget.conformance.ours import our_view
    from ci_budget.conformance.reference import ReferenceError, reference_view

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    model, raw = _model(options.partition_model, sink)
    try:
        ref = reference_view(root, raw)
    except ReferenceError as exc:
        raise AppError(str(exc)) from None
    result = compare(ref, our_view(root, config, model))
    sink.echo(table(result.rows))
    for line in result.differences[: options.max_differences]:
        sink.echo(f"DIFF {line}")
    left = len(result.differences) - options.max_differences
    if left > 0:
        sink.echo(f"... and {left} more differences")
    sink.echo("identical" if result.identical else f"{len(result.differences)} differences")
    return 0 if result.identical else 1
