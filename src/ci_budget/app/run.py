"""Use case `run`: the selected test files, each in its own process with a timeout, timings
recorded to the results file after every file (or, with `dry_run`, only what would run)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.options import HISTORY_HELP, MODEL_HELP, option
from ci_budget.app.sink import Sink


@dataclass
class RunOptions:
    specs: list[str] = option(
        list, flag=None, nargs="*", metavar="SPEC", help="path[::Class[::test]] to run"
    )
    suites: list[str] = option(list, flag="--suite", help="suite to run (repeatable)")
    partition: str | None = option(None, metavar="I/N", help="run shard I of N (0-based)")
    backend: str | None = option(
        None, help="registrations of this backend (default: the suite's only backend)"
    )
    nightly: bool = option(
        False,
        help="run the nightly=True registrations of the suites (and only those), as "
        "sglang's run_suite.py --nightly",
    )
    dry_run: bool = option(False, help="print what would run, in order; run nothing")
    format: str = option(
        "text", choices=("text", "json"), needs="dry_run", help="what --dry-run prints"
    )
    history: Path | None = option(None, metavar="FILE", help=HISTORY_HELP)
    partition_model: Path | None = option(None, metavar="FILE", help=MODEL_HELP)
    timeout_per_file: float | None = option(
        None,
        metavar="S",
        help="seconds per file (default: from config, sglang's max(1.5*est, est+1800))",
    )
    grace: float = option(5.0, metavar="S", help="seconds between SIGTERM and SIGKILL")
    heartbeat: float = option(60.0, metavar="S", help="seconds between heartbeats")
    out: Path = option(Path("ci-budget-results.json"), help="the results file to write")
    artifacts_dir: Path | None = option(
        None, metavar="DIR",
        help="keep the raw reports and logs there (default: a temporary folder, removed when "
        "every file passed)",
    )  # fmt: skip
    python: str | None = option(None, help="the tests' interpreter (default: this one)")
    mode: str | None = option(
        None, choices=("pytest", "script"), help="how a file runs (default: the config's)"
    )
    fail_fast: bool = option(
        False,
        off="--continue-on-error",
        help="stop at the first file that fails, or run every file (--continue-on-error)",
    )
    runner_config: str | None = option(None, help="runner config name, for the record")
    runner_labels: str | None = option(
        None, help="comma-separated labels (default: $RUNNER_LABELS)"
    )


def run(settings, options: RunOptions, sink: Sink | None = None) -> int:
    """Exit 0 when every file passed, 1 when one failed, timed out or crashed."""
    import sys

    from ci_budget.runner import preflight
    from ci_budget.runner import run as runner
    from ci_budget.runner.gpu import GpuProbe

    sink = sink or Sink(settings)
    settings.check()  # a bad root or config is the first error
    if options.dry_run:
        _print_dry_run(_select(settings, options, sink)[1], options.format, sink)
        return 0
    python = interpreter(options.python) if options.python else sys.executable
    mode = options.mode or settings.config.mode
    # Started before the scan, read after it: the interpreter and GPU queries overlap our work.
    pytest_probe = preflight.PytestProbe(python) if mode == "pytest" else None
    gpu_probe = GpuProbe(settings.config.gpu_arch_map(), python=python)
    try:
        registrations, selection = _select(settings, options, sink)
    except BaseException:
        for probe in (pytest_probe, gpu_probe):
            if probe is not None:
                probe.stop()
        raise
    jobs = selection.jobs
    skipped = [runner.skipped_result(s) for s in selection.skipped]
    why = pytest_probe.missing() if pytest_probe is not None else None
    if why is not None and jobs:
        raise AppError(f"--python {python}: cannot import pytest ({why}); install it there")
    out = options.out if options.out.is_absolute() else Path.cwd() / options.out
    meta = _meta(settings, options, registrations, python, mode, gpu_probe.result())
    opts = runner.RunSetup(
        root=settings.root,
        config=settings.config,
        out=out,
        artifacts_dir=options.artifacts_dir
        or Path(tempfile.mkdtemp(prefix="ci-budget-artifacts-")),
        python=python,
        mode=mode,
        timeout_per_file=options.timeout_per_file,
        grace=options.grace,
        heartbeat=options.heartbeat,
        fail_fast=options.fail_fast,
    )
    if not jobs:
        sink.echo(f"nothing to run in partition {options.partition}; writing {out}")
    results = None
    try:
        results = runner.run_jobs(jobs, skipped, meta, opts)
    finally:
        _keep_or_drop(opts.artifacts_dir, options.artifacts_dir is not None, results, sink)
    sink.echo(f"results: {out}")
    return runner.exit_status(results)


def _keep_or_drop(folder: Path, given: bool, results, sink: Sink) -> None:
    """The default raw-reports folder is temporary: gone when every file passed, else kept
    (the failing files' logs are there) and said once."""
    import shutil

    from ci_budget.runner import run as runner

    if given:
        return
    if results is not None and runner.exit_status(results) == 0:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        sink.note(f"raw reports and logs of the files: {folder} (--artifacts-dir DIR to choose)")


def _select(settings, options: RunOptions, sink: Sink):
    """(registrations, the shard's selection)."""
    from ci_budget.app.history import measured_weights, partition_model
    from ci_budget.runner.preflight import missing_selection
    from ci_budget.runner.run import resolve_path
    from ci_budget.sharding.planners import parse_partition
    from ci_budget.sharding.select import SelectionError, select_jobs
    from ci_budget.workspace.scan import scan_tree

    root, config = settings.root, settings.config
    partition = None
    if options.partition:
        try:
            partition = parse_partition(options.partition)
        except ValueError as exc:
            raise AppError(f"--partition: {exc}") from None
    if options.timeout_per_file is not None and not options.timeout_per_file > 0:
        raise AppError("--timeout-per-file must be positive")
    scan = scan_tree(root, config)
    for problem in scan.errors:
        sink.warn(f"registry error, file skipped: {problem}")
    model = partition_model(options.partition_model, sink)
    weights = measured_weights(options.history, scan.registrations)
    weights = {**(model.weights() if model is not None else {}), **weights}
    try:
        selection = select_jobs(
            scan.registrations,
            options.suites,
            options.specs,
            partition,
            algorithm=config.planner.algorithm,
            weights=weights,
            backend=options.backend,
            nightly=options.nightly,
            resolve=lambda path: resolve_path(path, root),
        )
    except SelectionError as exc:
        raise AppError(str(exc)) from None
    for job in selection.jobs:  # checked for --dry-run too: it answers what `run` would do
        if (why := missing_selection(root, job)) is not None:
            raise AppError(why)
    return scan.registrations, selection


def _print_dry_run(selection, fmt: str, sink: Sink) -> None:
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
        sink.json({"files": files, "skipped": skipped})
        return
    total = sum(j.est_time for j in selection.jobs)
    sink.echo(f"would run {len(selection.jobs)} file(s), est total {total:.0f}s:")
    for j in selection.jobs:
        sink.echo(
            f"  {j.path}{''.join(j.selection)}  est {j.est_time:.0f}s  {j.suite} ({j.backend})"
        )
    for s in selection.skipped:
        sink.echo(f"  skipped {s.path}  {s.suite} ({s.backend}): {s.reason}")


def _meta(settings, options: RunOptions, registrations, python: str, mode: str, gpu):
    """What the results file records about this run."""
    import socket

    from ci_budget import __version__
    from ci_budget.models import RunMeta
    from ci_budget.workspace.git import head_commit

    config = settings.config
    runner_config = options.runner_config
    if runner_config is None:
        names = {r.runner_config for r in registrations if r.suite in set(options.suites)}
        names |= {config.suite_runner(s) for s in options.suites} - {None}
        runner_config = names.pop() if len(names) == 1 else None
    rc_conf = config.runner(runner_config)
    labels = options.runner_labels or settings.env.runner_labels or ""
    return RunMeta(
        suites=list(options.suites),
        specs=list(options.specs),
        partition=options.partition,
        runner_config=runner_config,
        configured_arch=rc_conf.arch if rc_conf else None,
        # The checked-out commit first: for /rerun-test it is the authorised PR head, while
        # GITHUB_SHA is the default branch's tip.
        commit=head_commit(settings.root) or settings.env.sha,
        runner_labels=[x.strip() for x in labels.split(",") if x.strip()],
        host=socket.gethostname(),
        gpu=gpu,
        mode=mode,
        python=python,
        tool_version=__version__,
    )


def interpreter(name: str) -> str:
    """--python as an absolute path (tests run from the repository root or a worktree, not
    from here); `guard verify` takes it the same way."""
    import shutil

    if "/" in name:
        path = Path(name).expanduser().absolute()
        found = str(path) if path.is_file() else None
    else:
        found = shutil.which(name)
    if found is None:
        raise AppError(f"--python {name}: no such interpreter")
    return found
