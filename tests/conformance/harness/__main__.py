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
    runs: bool = option(
        False,
        help="also compare `ci-budget run` with the checkout's test/run_suite.py for every "
        "per-commit call its workflows make (files, order, per-file timeouts), and the exit "
        "status on a failing and a hanging file (slow: minutes)",
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
    if options.runs:
        rows, diffs = _runs(root, options.partition_model)
        result.rows += [(what, theirs, theirs if ok.startswith("identical") else "see DIFF", ok)
                        for what, theirs, ok in rows]  # fmt: skip
        result.differences += diffs
    sink.echo(table(result.rows))
    for line in result.differences[: options.max_differences]:
        sink.echo(f"DIFF {line}")
    left = len(result.differences) - options.max_differences
    if left > 0:
        sink.echo(f"... and {left} more differences")
    sink.echo("identical" if result.identical else f"{len(result.differences)} differences")
    return 0 if result.identical else 1


def _runs(root: Path, partition_model: Path | None) -> tuple[list[tuple], list[str]]:
    """`run` against run_suite.py: every per-commit call in listing mode, then the exit
    status cases on a small tree of the checkout's scripts."""
    import tempfile

    from ci_budget.conformance import dropin, dropin_exit
    from ci_budget.conformance.run_suite_ref import ReferenceRunError

    model = str(partition_model.resolve()) if partition_model else None
    try:
        rows, diffs = dropin.compare_calls(
            root, dropin.stage_calls(root, model) + dropin.inline_calls(root)
        )
        for case in dropin_exit.CASES:
            with tempfile.TemporaryDirectory(prefix="ci-budget-dropin-") as tmp:
                result = dropin_exit.run_case(root, Path(tmp), case)
            why = dropin_exit.agree(result)
            seen = result["sglang"]
            ran = ", ".join(f"{t['file'].rsplit('/', 1)[-1]} {'ok' if t['passed'] else 'FAIL'}"
                            for t in seen["timings"])  # fmt: skip
            rows.append((case, f"exit {seen['exit']}: {ran}", "identical" if not why else why))
            if why:
                diffs.append(f"{case}: {why}")
    except (ReferenceRunError, OSError, ValueError) as exc:
        raise AppError(f"run_suite.py comparison: {exc}") from None
    return rows, diffs
