"""`ci-budget run`: run registered test files with per-file timeouts and record timings."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_common, add_history, add_partition_model, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "run",
        help="run registered test files and record per-file and per-class timings",
        description="Run the files of one or more suites (or explicit specs), each in its own "
        "process with a timeout, and write a results JSON after every file. Prints progress "
        "lines and, at the end, sglang's TIMINGS block. Exit status: 0 every file passed, "
        "1 a file failed, timed out or crashed, 2 usage error.",
        example="ci-budget run --suite base-b-test-1-gpu-large --partition 0/2 "
        "--out results/shard0.json\n"
        "ci-budget run test/registered/test_srt.py::TestSRT.test_decode --timeout-per-file 600\n"
        "ci-budget run --suite base-b-test-1-gpu-large --partition 3/12 --dry-run --format json",
    )
    add_common(p)
    p.add_argument("specs", nargs="*", metavar="SPEC", help="path[::Class[::test]] to run")
    p.add_argument("--suite", action="append", default=[], help="suite to run (repeatable)")
    p.add_argument("--partition", default=None, metavar="I/N", help="run shard I of N (0-based)")
    p.add_argument(
        "--backend",
        default=None,
        help="registrations of this backend (default: the suite's only backend)",
    )
    p.add_argument(
        "--nightly",
        action="store_true",
        help="run the nightly=True registrations of the suites (and only those), as "
        "sglang's run_suite.py --nightly",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print what would run, in order; run nothing"
    )
    p.add_argument("--format", choices=["text", "json"], default="text", help="--dry-run output")
    add_history(p)
    add_partition_model(p)
    p.add_argument(
        "--timeout-per-file",
        type=float,
        default=None,
        metavar="S",
        help="seconds per file (default: from config, sglang's max(1.5*est, est+1800))",
    )
    p.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    p.add_argument("--heartbeat", type=float, default=60.0, help="seconds between heartbeats")
    p.add_argument("--out", type=Path, default=Path("ci-budget-results.json"))
    p.add_argument(
        "--artifacts-dir", type=Path, default=None, help="raw reports (default: next to --out)"
    )
    p.add_argument("--python", default=None, help="the tests' interpreter (default: this one)")
    p.add_argument("--mode", choices=["pytest", "script"], default=None)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--fail-fast", dest="fail_fast", action="store_true")
    group.add_argument("--continue-on-error", dest="fail_fast", action="store_false")
    p.set_defaults(fail_fast=False)
    p.add_argument("--runner-config", default=None, help="runner config name, for the record")
    p.add_argument(
        "--runner-labels", default=None, help="comma-separated labels (default: $RUNNER_LABELS)"
    )
    return p


def _commit(root: Path) -> str | None:
    import os
    import subprocess

    # The checked-out commit first: for /rerun-test it is the authorised PR head, while
    # GITHUB_SHA is the default branch's tip.
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return os.environ.get("GITHUB_SHA") or None


def _select(args, root, config, scan, partition):
    from ci_budget.cli.common import (
        CliError,
        history_weights,
        load_partition_model,
        merged_weights,
    )
    from ci_budget.runner.run import resolve_path
    from ci_budget.sharding.select import SelectionError, select_jobs

    model = load_partition_model(args.partition_model)
    weights = merged_weights(history_weights(args.history, scan.registrations), model)
    try:
        return select_jobs(
            scan.registrations,
            args.suite,
            args.specs,
            partition,
            algorithm=config.planner.algorithm,
            weights=weights,
            backend=args.backend,
            nightly=args.nightly,
            resolve=lambda path: resolve_path(path, root),
        )
    except SelectionError as exc:
        raise CliError(str(exc)) from None


def _print_dry_run(selection, fmt: str) -> None:
    import json

    if fmt == "json":
        files = [
            {"path": j.path, "est_time": j.est_time, "suite": j.suite, "backend": j.backend}
            | ({"selection": j.selection} if j.selection else {})
            for j in selection.jobs
        ]
        skipped = [
            {
                "path": s.path,
                "est_time": s.est_time,
                "suite": s.suite,
                "backend": s.backend,
                "reason": s.reason,
            }  # fmt: skip
            for s in selection.skipped
        ]
        print(json.dumps({"files": files, "skipped": skipped}, indent=2))
        return
    total = sum(j.est_time for j in selection.jobs)
    print(f"would run {len(selection.jobs)} file(s), est total {total:.0f}s:")
    for j in selection.jobs:
        print(f"  {j.path}{''.join(j.selection)}  est {j.est_time:.0f}s  {j.suite} ({j.backend})")
    for s in selection.skipped:
        print(f"  skipped {s.path}  {s.suite} ({s.backend}): {s.reason}")


def run(args) -> int:
    import os
    import socket
    import sys

    from ci_budget import __version__
    from ci_budget.cli.common import CliError, load
    from ci_budget.models import RunMeta
    from ci_budget.runner.gpu import detect_gpu
    from ci_budget.runner.run import RunOptions, exit_status, run_jobs, skipped_result
    from ci_budget.sharding.planners import parse_partition
    from ci_budget.workspace.scan import scan_tree

    root, config = load(args)
    partition = None
    if args.partition:
        try:
            partition = parse_partition(args.partition)
        except ValueError as exc:
            raise CliError(f"--partition: {exc}") from None
    if args.timeout_per_file is not None and not args.timeout_per_file > 0:
        raise CliError("--timeout-per-file must be positive")
    scan = scan_tree(root, config)
    for problem in scan.errors:
        print(f"warning: registry error, file skipped: {problem}", file=sys.stderr)
    selection = _select(args, root, config, scan, partition)
    if args.dry_run:
        _print_dry_run(selection, args.format)
        return 0
    jobs, skipped = selection.jobs, [skipped_result(s) for s in selection.skipped]
    from ci_budget.runner.run import missing_selection

    for job in jobs:
        if (why := missing_selection(root, job)) is not None:
            raise CliError(why)
    python = _interpreter(args.python) if args.python else sys.executable
    if (args.mode or config.mode) == "pytest" and jobs:
        from ci_budget.runner.run import pytest_missing

        why = pytest_missing(python)
        if why is not None:
            raise CliError(f"--python {python}: cannot import pytest ({why}); install it there")
    out = args.out if args.out.is_absolute() else Path.cwd() / args.out
    artifacts = args.artifacts_dir or out.with_name(out.stem + "-artifacts")
    runner_config = args.runner_config
    if runner_config is None:
        names = {r.runner_config for r in scan.registrations if r.suite in set(args.suite)}
        names |= {config.suite_runner(s) for s in args.suite} - {None}
        runner_config = names.pop() if len(names) == 1 else None
    rc_conf = config.runner(runner_config)
    labels = args.runner_labels or os.environ.get("RUNNER_LABELS", "")
    meta = RunMeta(
        suites=list(args.suite),
        specs=list(args.specs),
        partition=args.partition,
        runner_config=runner_config,
        configured_arch=rc_conf.arch if rc_conf else None,
        commit=_commit(root),
        runner_labels=[x.strip() for x in labels.split(",") if x.strip()],
        host=socket.gethostname(),
        gpu=detect_gpu(config.gpu_arch_map(), python=python),
        mode=args.mode or config.mode,
        python=python,
        tool_version=__version__,
    )
    opts = RunOptions(
        root=root,
        config=config,
        out=out,
        artifacts_dir=artifacts,
        python=python,
        mode=meta.mode,
        timeout_per_file=args.timeout_per_file,
        grace=args.grace,
        heartbeat=args.heartbeat,
        fail_fast=args.fail_fast,
    )
    if not jobs:
        print(f"nothing to run in partition {args.partition}; writing {out}")
    results = run_jobs(jobs, skipped, meta, opts)
    print(f"results: {out}")
    return exit_status(results)


def _interpreter(name: str) -> str:
    """--python as an absolute path: tests run from the repository root, not from here."""
    import shutil

    from ci_budget.cli.common import CliError

    if "/" in name:
        path = Path(name).expanduser().absolute()
        found = str(path) if path.is_file() else None
    else:
        found = shutil.which(name)
    if found is None:
        raise CliError(f"--python {name}: no such interpreter")
    return found
