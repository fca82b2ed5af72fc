"""python -m tests.conformance.harness SGLANG_CHECKOUT [--partition-model FILE] [--runs]

Run an sglang checkout's own CI scripts and compare with what ci-budget decides on it, zero
config (docs/dev/sglang-conformance.md). Exit status: 0 identical, 1 any difference, 2 (one
line) a script is missing or fails, or the checkout's CI does what ci-budget does not model.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from ci_budget.app.settings import AppError, Settings, Sink

PROG = "python -m tests.conformance.harness"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n", 1)[1])
    p.add_argument("root", type=Path, metavar="SGLANG_CHECKOUT", help="an sglang checkout")
    p.add_argument("--partition-model", type=Path, metavar="FILE",
                   help="sglang-ci-stats' model.json, given to both sides")  # fmt: skip
    p.add_argument("--max-differences", type=int, default=40, metavar="N",
                   help="differences listed after the table (default 40)")  # fmt: skip
    p.add_argument("--runs", action="store_true",
                   help="also compare `ci-budget run` with test/run_suite.py for every per-commit "
                   "call its workflows make (files, order, per-file timeouts), and the exit status "
                   "on a failing and a hanging file (slow: minutes)")  # fmt: skip
    return p


def _supported(root: Path) -> None:
    """Refuse, in one line, a checkout whose CI scripts do what ci-budget does not model:
    comparing would only list the consequences."""
    from ci_budget.workspace.project import detect

    profile = detect(root)
    if profile is None:
        raise AppError(f"{root}: not an sglang checkout (it has none of sglang's CI files)")
    if profile.unsupported:
        raise AppError(
            f"{root}: this version of sglang's CI is not supported: "
            + "; ".join(profile.unsupported)
        )


def conformance(args: argparse.Namespace) -> int:
    """Print the comparison table and each difference; 1 on any difference."""
    from tests.conformance.harness.compare import compare, table
    from tests.conformance.harness.ours import our_view
    from tests.conformance.harness.reference import ReferenceError, reference_view

    settings = Settings(root=args.root)
    sink = Sink(settings)
    _supported(settings.root)  # before the configuration, whose warnings would say it again
    root, model = settings.root, args.partition_model
    try:
        ref = reference_view(root, model)
    except ReferenceError as exc:
        raise AppError(str(exc)) from None
    try:
        ours = our_view(root, settings.config, model, sink)
    except AppError:
        raise
    except Exception as exc:  # noqa: BLE001 - a one-line answer, never a traceback
        first = (str(exc).strip().splitlines() or [""])[0]
        raise AppError(
            f"ci-budget cannot read this checkout: {type(exc).__name__}: {first}"
        ) from None
    result = compare(ref, ours)
    if args.runs:
        rows, diffs = _runs(root, model)
        result.rows += [(what, theirs, theirs if ok.startswith("identical") else "see DIFF", ok)
                        for what, theirs, ok in rows]  # fmt: skip
        result.differences += diffs
    sink.echo(table(result.rows))
    for line in result.differences[: args.max_differences]:
        sink.echo(f"DIFF {line}")
    left = len(result.differences) - args.max_differences
    if left > 0:
        sink.echo(f"... and {left} more differences")
    sink.echo("identical" if result.identical else f"{len(result.differences)} differences")
    return 0 if result.identical else 1


def _runs(root: Path, partition_model: Path | None) -> tuple[list[tuple], list[str]]:
    """`run` against run_suite.py: every per-commit call in listing mode, then the exit
    status cases on a small tree of the checkout's scripts."""
    from tests.conformance.harness import dropin, dropin_exit
    from tests.conformance.harness.run_suite_ref import ReferenceRunError

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


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return conformance(args)
    except AppError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
