"""Use case `conformance`: run an sglang checkout's own CI scripts and compare with ci-budget."""

from __future__ import annotations

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


def conformance(settings, options: ConformanceOptions, sink: Sink | None = None) -> int:
    """Print the comparison table and each difference; 1 on any difference."""
    from ci_budget.app.numbers import partition_model
    from ci_budget.conformance.compare import compare, table
    from ci_budget.conformance.ours import our_view
    from ci_budget.conformance.reference import ReferenceError, reference_view

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    # sglang's scripts read the file itself, as its CI does; ci-budget through its one reader
    model = partition_model(options.partition_model, sink)
    try:
        ref = reference_view(root, options.partition_model)
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
