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
        "lines and, at the end, sglang's TIMINGS block. Stops at the first file that does not "
        "pass, as sglang's per-commit runs do (--continue-on-error runs the rest). A drop-in "
        "for sglang's `run_suite.py`: its flags (--hw, --auto-partition-id/-size, "
        "--partition-model-file, --timeout-from-est-time, --enable-retry ...) mean what they "
        "mean there, and with --hw the files run as `python3 FILE -f` from test/. "
        "Exit status: 0 every file passed, 1 a file failed, timed out or crashed, 2 usage error.",
        example="ci-budget run --suite base-b-test-1-gpu-large --partition 0/2 "
        "--out results/shard0.json\n"
        "ci-budget run test/registered/test_srt.py::TestSRT.test_decode --timeout-per-file 600\n"
        "ci-budget run --suite base-b-test-1-gpu-large --partition 3/12 --dry-run --format json\n"
        "cd test && ci-budget run --hw cuda --suite base-b-test-1-gpu-large "
        "--auto-partition-id 3 --auto-partition-size 12 --partition-model-file model.json",
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
        "--hw",
        default=None,
        metavar="BACKEND",
        help="run_suite.py's --hw: --backend, and the files run as that script runs them "
        "(`python3 FILE -f` from test/); a suite with no such files runs nothing and passes",
    )
    p.add_argument(
        "--auto-partition-id",
        type=int,
        default=None,
        metavar="I",
        help="run_suite.py's spelling of --partition I/N (with --auto-partition-size)",
    )
    p.add_argument("--auto-partition-size", type=int, default=None, metavar="N")  # fmt: skip
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
    add_partition_model(p, "--partition-model-file")
    p.add_argument(
        "--timeout-per-file",
        type=float,
        default=None,
        metavar="S",
        help="seconds per file (default: the suite's own from the workflows, else "
        "file-timeout: 1200, run_suite.py's)",
    )
    p.add_argument(
        "--timeout-from-est-time",
        action="store_true",
        help="each file's limit from its est_time, max(1.5*est, est+1800): sglang's scheduled rule",
    )
    p.add_argument(
        "--enable-retry",
        action="store_true",
        help="run a file again after a timeout or a retriable failure (patterns: "
        "retry-patterns; sglang: its ci_utils.py)",
    )
    p.add_argument(
        "--max-attempts",
        type=int,
        default=2,
        metavar="N",
        help="attempts per file with --enable-retry (default 2)",
    )
    p.add_argument("--retry-wait-seconds", type=float, default=60.0, metavar="S")
    p.add_argument("--retry-timeout-increase", type=float, default=600.0, metavar="S",
                   help="added to a flat per-file timeout with --enable-retry (default 600)")  # fmt: skip
    p.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    p.add_argument("--heartbeat", type=float, default=60.0, help="seconds between heartbeats")
    p.add_argument("--out", type=Path, default=Path("ci-budget-results.json"))
    p.add_argument(
        "--from-log",
        type=Path,
        default=None,
        metavar="LOG",
        help="run nothing: write the results file from the output of a run_suite.py run with "
        "the same flags (its TIMINGS block); the files it does not list are not run",
    )
    p.add_argument(
        "--artifacts-dir", type=Path, default=None, help="raw reports (default: next to --out)"
    )
    p.add_argument("--python", default=None, help="the tests' interpreter (default: this one)")
    p.add_argument("--mode", choices=["pytest", "script"], default=None)
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--fail-fast",
        dest="fail_fast",
        action="store_true",
        help="stop at the first file that does not pass (the default)",
    )
    group.add_argument("--continue-on-error", dest="fail_fast", action="store_false",
                       help="run every file whatever the earlier ones did")  # fmt: skip
    p.set_defaults(fail_fast=True)
    p.add_argument("--runner-config", default=None, help="runner config name, for the record")
    p.add_argument(
        "--runner-labels", default=None, help="comma-separated labels (default: $RUNNER_LABELS)"
    )
    return p


def _partition(args) -> str | None:
    pid, size = args.auto_partition_id, args.auto_partition_size
    if (pid is None) != (size is None):
        args._parser.error("--auto-partition-id and --auto-partition-size go together")
    if size is None:
        return args.partition
    if args.partition:
        args._parser.error("--partition or --auto-partition-id/-size, not both")
    return f"{pid}/{size}"


def run(args) -> int:
    import shutil

    from ci_budget.app.run import Retry, RunOptions
    from ci_budget.app.run import run as run_files
    from ci_budget.cli.common import settings

    drop_in = args.hw is not None
    if drop_in and args.backend not in (None, args.hw):
        args._parser.error("--hw and --backend name different backends")
    retry = None
    if args.enable_retry:
        retry = Retry(args.max_attempts, args.retry_wait_seconds, args.retry_timeout_increase)
    options = RunOptions(
        specs=args.specs,
        suites=args.suite,
        partition=_partition(args),
        backend=args.backend or args.hw,
        nightly=args.nightly,
        dry_run=args.dry_run,
        format=args.format,
        history=args.history,
        partition_model=args.partition_model,
        timeout_per_file=args.timeout_per_file,
        timeout_from_est_time=args.timeout_from_est_time,
        grace=args.grace,
        heartbeat=args.heartbeat,
        out=args.out,
        artifacts_dir=args.artifacts_dir,
        # run_suite.py runs `python3 FILE -f` with the python3 on PATH
        python=args.python or (shutil.which("python3") if drop_in else None),
        mode=args.mode or ("script" if drop_in else None),
        fail_fast=args.fail_fast,
        retry=retry,
        drop_in=drop_in,
        runner_config=args.runner_config,
        runner_labels=args.runner_labels,
        from_log=args.from_log,
    )
    return run_files(settings(args).check(), options)
