"""Use case `run`: the selected test files, each in its own process with a timeout, timings
recorded to the results file after every file (or, with `dry_run`, only what would run)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ci_budget.app.run_dropin import (
    Retry,
    drop_in_options,
    nothing_to_run,
    print_dry_run,
    read_log,
    retry_rules,
)
from ci_budget.app.sandboxing import (
    env_drop_option,
    env_keep_option,
    interpreter,
    open_sandbox,
    sandbox_cache_option,
    sandbox_expose_option,
    sandbox_network_option,
    sandbox_option,
    sandbox_policy,
)
from ci_budget.app.settings import HISTORY_HELP, MODEL_HELP, AppError, Sink, option


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
        help="seconds per file (default: the suite's own from the workflows, else "
        "file-timeout: 1200, run_suite.py's)",
    )
    timeout_from_est_time: bool = option(
        False,
        help="each file's limit from its est_time, max(1.5*est, est+1800): sglang's scheduled rule",
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
        True,
        off="--continue-on-error",
        help="run every file, whatever the earlier ones did (default: stop at the first file "
        "that does not pass, as sglang's per-commit runs do)",
    )
    runner_config: str | None = option(None, help="runner config name, for the record")
    runner_labels: str | None = option(
        None, help="comma-separated labels (default: $RUNNER_LABELS)"
    )
    # run_suite.py's flags, meaning what they mean there (`run` is its drop-in).
    hw: str | None = option(
        None,
        metavar="BACKEND",
        help="run_suite.py's --hw: --backend, and the files run as that script runs them "
        "(`python3 FILE -f` from test/); a suite with no such files runs nothing and passes",
    )
    auto_partition_id: int | None = option(
        None, metavar="I", help="run_suite.py's spelling of --partition I/N (with -size)"
    )
    auto_partition_size: int | None = option(None, metavar="N", help="see --auto-partition-id")
    partition_model_file: Path | None = option(
        None, metavar="FILE", help="run_suite.py's spelling of --partition-model"
    )
    enable_retry: bool = option(
        False,
        help="run a file again after a timeout or a retriable failure (patterns: "
        "retry-patterns; sglang: its ci_utils.py)",
    )
    max_attempts: int = option(
        2, metavar="N", needs="enable_retry", help="attempts per file (default 2)"
    )
    retry_wait_seconds: float = option(
        60.0, metavar="S", needs="enable_retry", help="seconds before a retry (default 60)"
    )
    retry_timeout_increase: float = option(
        600.0,
        metavar="S",
        needs="enable_retry",
        help="added to a flat per-file timeout when retrying (default 600)",
    )
    from_log: Path | None = option(
        None,
        metavar="LOG",
        help="run nothing: write the results file from the output of a run_suite.py run with "
        "the same flags (its TIMINGS block); the files it does not list are not run",
    )
    sandbox: str = sandbox_option()
    sandbox_expose: list[str] = sandbox_expose_option()
    sandbox_network: str = sandbox_network_option()
    sandbox_cache: list[str] = sandbox_cache_option()
    install: str | None = option(
        None, metavar="CMD",
        help="the repository's install step (bash -c CMD, from the root) run first, in the "
        "tests' sandbox: what it installs into the tests' interpreter, $HOME and the caches "
        "is there for the files and goes with the run; a failure stops the run (exit 1)",
    )  # fmt: skip
    env_drop: list[str] = env_drop_option()
    env_keep: list[str] = env_keep_option()

    @property
    def drop_in(self) -> bool:
        """Called as run_suite.py is (--hw): its empty-selection rules and file commands."""
        return self.hw is not None

    @property
    def retry(self) -> Retry | None:
        if not self.enable_retry:
            return None
        return Retry(self.max_attempts, self.retry_wait_seconds, self.retry_timeout_increase)


def run(settings, options: RunOptions, sink: Sink | None = None) -> int:
    """Exit 0 when every file passed, 1 when one failed, timed out or crashed."""
    import sys

    sink = sink or Sink(settings)
    settings.check()  # a bad root or config is the first error
    options = drop_in_options(options)
    if options.dry_run:
        print_dry_run(_select(settings, options, sink)[1], options.format, sink)
        return 0
    if options.from_log is not None:
        registrations, selection = _select(settings, options, sink)
        python = options.python or "python3"
        meta = _meta(settings, options, registrations, python, "script", None)
        return read_log(options, selection, meta, settings.root, sink)
    if options.drop_in and (why := nothing_to_run(settings, options, sink)) is not None:
        sink.echo(why)  # run_suite.py: a warning, nothing run, success
        return 0
    python = interpreter(options.python) if options.python else sys.executable
    mode = options.mode or settings.config.mode
    policy = replace(sandbox_policy(options), install=bool(options.install))
    box, env = open_sandbox(settings.root, settings.config, policy, python,
                            settings.env.in_actions, sink.warn)  # fmt: skip
    if box is not None:
        sink.echo(f"sandbox: {box.describe()}")
    env_add: dict[str, str] = {}
    try:
        if options.install:
            from ci_budget.runner.run import install

            first, *more = options.install.strip().splitlines() or [""]
            sink.echo(f"install (in the tests' sandbox): {first}{' ...' if more else ''}")
            rc, env_add = install(options.install, settings.root, env, box, sink.stdout)
            if rc != 0:
                sink.error(f"--install exited {rc}: no file ran")
                return 1
        return _run(settings, options, sink, python, mode, box, env, env_add)
    finally:
        if box is not None:
            box.close()


def _run(settings, options: RunOptions, sink: Sink, python: str, mode: str, box, env,
         env_add: dict[str, str]) -> int:  # fmt: skip
    """`env_add`: what the install step set for the files (never for the probes, whose bwrap
    starts with the environment it is given)."""
    from ci_budget.runner import preflight
    from ci_budget.runner import run as runner
    from ci_budget.runner.preflight import GpuProbe
    from ci_budget.runner.sandbox import probe_wrap

    wrap = probe_wrap(box, settings.root)
    # Started before the scan, read after it: the interpreter and GPU queries overlap our work.
    pytest_probe = preflight.PytestProbe(python, env, wrap) if mode == "pytest" else None
    gpu_probe = GpuProbe(settings.config.gpu_arch_map(), python=python, env=env, wrap=wrap)
    try:
        registrations, selection = _select(settings, options, sink)
    except BaseException:
        for stop in ([pytest_probe.stop] if pytest_probe else []) + [gpu_probe.stop]:
            stop()
        raise
    jobs = selection.jobs
    skipped = [runner.skipped_result(s) for s in selection.skipped]
    why = pytest_probe.missing() if pytest_probe is not None else None
    if why is not None and jobs:
        raise AppError(f"--python {python}: cannot import pytest ({why}); install it there")
    out = options.out if options.out.is_absolute() else Path.cwd() / options.out
    meta = _meta(settings, options, registrations, python, mode, gpu_probe.result())
    artifacts = options.artifacts_dir or Path(tempfile.mkdtemp(prefix="ci-budget-artifacts-"))
    opts = runner.RunSetup(
        root=settings.root, config=settings.config, out=out, python=python, mode=mode,
        artifacts_dir=artifacts, timeout_per_file=options.timeout_per_file, grace=options.grace,
        heartbeat=options.heartbeat, fail_fast=options.fail_fast,
        retry=retry_rules(settings, options.retry), sandbox=box, env_add=env_add,
    )  # fmt: skip
    if options.drop_in:
        print_dry_run(selection, "text", sink)
    if not jobs:
        sink.echo(f"nothing to run in partition {options.partition}; writing {out}")
    results = None
    try:
        results = runner.run_jobs(jobs, skipped, meta, opts)
    finally:
        if options.artifacts_dir is None:
            passed = results is not None and runner.exit_status(results) == 0
            _keep_or_drop(opts.artifacts_dir, passed, sink)
    sink.echo(f"results: {out}")
    return runner.exit_status(results)


def _keep_or_drop(folder: Path, passed: bool, sink: Sink) -> None:
    """The default raw-reports folder is temporary: gone when every file passed, else kept
    (the failing files' logs are there) and said once."""
    import shutil

    if passed:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        sink.note(f"raw reports and logs of the files: {folder} (--artifacts-dir DIR to choose)")


def _select(settings, options: RunOptions, sink: Sink):
    """(registrations, the shard's selection)."""
    from ci_budget.app.numbers import note_uncovered, plan_numbers
    from ci_budget.runner.preflight import missing_selection
    from ci_budget.runner.run import resolve_path
    from ci_budget.sharding.select import SelectionError, parse_partition, select_jobs
    from ci_budget.workspace.scan import directory_order, rerun_files, scan_tree

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
    # Every shard of a run must read the same numbers, or the shards would split differently.
    numbers = plan_numbers(options.history, options.partition_model, sink)
    weights = numbers.weights(scan.registrations)
    note_uncovered(numbers, options.suites, sink)
    try:
        selection = select_jobs(
            scan.registrations,
            options.suites,
            options.specs,
            partition,
            weights=weights,
            backend=options.backend,
            nightly=options.nightly,
            resolve=lambda path: resolve_path(path, root),
            order=directory_order(root, config) if partition is None else None,
            extra=rerun_files(root, config) if options.specs else (),
        )
    except SelectionError as exc:
        raise AppError(str(exc)) from None
    for job in selection.jobs:  # checked for --dry-run too: it answers what `run` would do
        if (why := missing_selection(root, job)) is not None:
            raise AppError(why)
        job.timeout = config.timeout_for(
            job.est_time,
            job.suite,
            options.timeout_per_file,
            options.timeout_from_est_time,
            options.retry.timeout_increase if options.retry else 0.0,
        )
    return scan.registrations, selection


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
        suites=list(options.suites), specs=list(options.specs), partition=options.partition,
        runner_config=runner_config, configured_arch=rc_conf.arch if rc_conf else None,
        # The checked-out commit first: for /rerun-test it is the authorised PR head, while
        # GITHUB_SHA is the default branch's tip.
        commit=head_commit(settings.root) or settings.env.sha,
        repository=settings.env.repository,
        runner_labels=[x.strip() for x in labels.split(",") if x.strip()],
        host=socket.gethostname(), gpu=gpu, mode=mode, python=python, tool_version=__version__,
    )  # fmt: skip
