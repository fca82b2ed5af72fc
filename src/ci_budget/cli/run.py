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
    add_sandbox(p)
    return p


def add_sandbox(p) -> None:
    """The tests' sandbox (README: The tests' sandbox); `run` and `guard verify` both run PR
    code. Command-line only: the config file is the PR's in a GPU job."""
    p.add_argument(
        "--sandbox",
        choices=["auto", "on", "off"],
        default="auto",
        help="run each test file in a bubblewrap sandbox: on (fail when it cannot start), off, "
        "or auto (default: on in a GitHub Actions job, off elsewhere)",
    )
    p.add_argument(
        "--sandbox-expose",
        action="append",
        default=[],
        metavar="PATH[:rw]",
        help="a path the sandbox hides (e.g. under $HOME) shown to the tests, read-only unless "
        "PATH:rw (repeatable)",
    )
    p.add_argument(
        "--sandbox-network",
        choices=["host", "none"],
        default="host",
        help="host (default: model downloads work) or none (loopback only)",
    )


def run(args) -> int:
    from ci_budget.app.run import RunOptions
    from ci_budget.app.run import run as run_files
    from ci_budget.cli.common import settings

    options = RunOptions(
        specs=args.specs,
        suites=args.suite,
        partition=args.partition,
        backend=args.backend,
        nightly=args.nightly,
        dry_run=args.dry_run,
        format=args.format,
        history=args.history,
        partition_model=args.partition_model,
        timeout_per_file=args.timeout_per_file,
        grace=args.grace,
        heartbeat=args.heartbeat,
        out=args.out,
        artifacts_dir=args.artifacts_dir,
        python=args.python,
        mode=args.mode,
        fail_fast=args.fail_fast,
        runner_config=args.runner_config,
        runner_labels=args.runner_labels,
        sandbox=args.sandbox,
        sandbox_expose=args.sandbox_expose,
        sandbox_network=args.sandbox_network,
    )
    return run_files(settings(args).check(), options)
