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


def _supported(root: Path) -> None:
    """Refuse, in one line, a checkout whose CI scripts do what ci-budget does not model:
    comparing would only list the consequences."""
    from ci_budget.workspace.ciprofile import detect

    profile = detect(root)
    if profile is None:
        raise AppError(f"{root}: not an sglang checkout (it has none of sglang's CI files)")
    if profile.unsupported:
        raise AppError(
            f"{root}: this version of sglang's CI is not supported: "
            + "; ".join(profile.unsupported)
        )


def conformance(settings, options: ConformanceOptions, sink: Sink | None = None) -> int:
    """Print the comparison table and each difference; 1 on any difference."""
    from ci_budget.app.numbers import partition_model
    from ci_budget.conformance.compare import compare, table
    from ci_budget.conformance.ours import our_view
    from ci_budget.conformance.reference import ReferenceError, reference_view

    sink = sink or Sink(settings)
    _supported(settings.root)  # before the configuration, whose warnings would say it again
    root, config = settings.root, settings.config
    # sglang's scripts read the file itself, as its CI does; ci-budget through its one reader
    model = partition_model(options.partition_model, sink)
    try:
        ref = reference_view(root, options.partition_model)
    except ReferenceError as exc:
        raise AppError(str(exc)) from None
    try:
        ours = our_view(root, config, model)
    except Exception as exc:  # noqa: BLE001 - a one-line answer, never a traceback
        first = (str(exc).strip().splitlines() or [""])[0]
        raise AppError(
            f"ci-budget cannot read this checkout: {type(exc).__name__}: {first}"
        ) from None
    result = compare(ref, ours)
    sink.echo(table(result.rows))
    for line in result.differences[: options.max_differences]:
        sink.echo(f"DIFF {line}")
    left = len(result.differences) - options.max_differences
    if left > 0:
        sink.echo(f"... and {left} more differences")
    sink.echo("identical" if result.identical else f"{len(result.differences)} differences")
    return 0 if result.identical else 1
