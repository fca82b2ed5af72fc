"""`ci-budget suggest`: new est_time values from the timing history, optionally written back."""

from __future__ import annotations

from pathlib import Path

from ci_budget import HISTORY_STORE
from ci_budget.cli.common import add_common, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "suggest",
        help="suggest est_time values from measured history",
        description="Suggest est_time = p90 of passing runs x (1 + thresholds.margin), rounded "
        "up to thresholds.round-to, where the change is at least 30 s and 30 %. --write "
        "rewrites only the est_time literal in each test file.",
        example="ci-budget suggest --store ci-budget-history.json\n"
        "ci-budget suggest --suite base-b-test-1-gpu-large --write",
    )
    add_common(p)
    p.add_argument("--store", type=Path, default=Path(HISTORY_STORE), help="history store")
    p.add_argument("--suite", action="append", default=[], help="only this suite (repeatable)")
    p.add_argument("--write", action="store_true", help="rewrite est_time in the test files")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument(
        "--min-samples", type=int, default=1, help="passing runs needed for a suggestion"
    )
    p.add_argument(
        "--all", action="store_true", help="also list changes below the 30 s / 30 %% rule"
    )
    return p


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as fh:  # keep CRLF as it is
        return fh.read()


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def run(args) -> int:
    import json
    import sys

    from ci_budget.budget.suggest import RewriteError, rewrite_est_time, significant, suggest
    from ci_budget.cli.common import CliError, load
    from ci_budget.history.model import HistoryError, load_history
    from ci_budget.registry.parse import select
    from ci_budget.workspace.scan import scan_tree

    root, config = load(args)
    try:
        history = load_history(args.store, missing_ok=False)
    except HistoryError as exc:
        raise CliError(str(exc)) from None
    scan = scan_tree(root, config)
    regs = select(scan, suites=args.suite)
    found = suggest(regs, history, config.thresholds, args.min_samples, include_all=args.all)
    if args.format == "json":
        payload = [s.model_dump(mode="json") | {"delta": s.delta} for s in found]
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for s in found:
            mark = "" if significant(s.est_time, s.suggested) else "  (below 30 s / 30 %)"
            timeouts = (
                f"; {s.timeouts} timeout(s), >= {s.timeout_lower_bound:.0f} s" if s.timeouts else ""
            )
            print(
                f"{s.file}:{s.line}: {s.suite}: est_time {s.est_time:g} -> {s.suggested} "
                f"({s.delta:+.0f} s; p90 {s.p90:.0f} s over {s.n} passing run(s){timeouts}){mark}"
            )
        if not found:
            print("no est_time changes to suggest")
    for problem in scan.errors:
        print(f"warning: registry error, file skipped: {problem}", file=sys.stderr)
    if not args.write:
        return 0
    failed = 0
    for s in found:
        if not significant(s.est_time, s.suggested):
            continue
        path = root / s.file
        try:
            text = _read(path)
            _write(
                path,
                rewrite_est_time(text, s.file, s.suite, s.backend, s.suggested, config),
            )
        except (OSError, RewriteError, SyntaxError) as exc:
            print(f"error: {s.file}:{s.line}: not rewritten: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"wrote {s.file}:{s.line}: est_time={s.suggested}", file=sys.stderr)
    return 2 if failed else 0
