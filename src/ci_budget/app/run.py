"""Use case `run`: the selected test files, each in its own process with a timeout, timings
recorded to the results file after every file (or, with `dry_run`, only what would run)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.app.options import HISTORY_HELP, MODEL_HELP, option
from ci_budget.app.run_dropin import Retry, drop_in_options, nothing_to_run, retry_rules
from ci_budget.app.sink import Sink
from ci_budget.units import secs


# The tests' sandbox, for `run` and `guard verify` (both run PR code). Command line only: in a
# GPU job the config file is the PR's.
def sandbox_option():
    return option(
        "auto",
        choices=("auto", "on", "off"),
        help="run each test file in a bubblewrap sandbox: on (fail when it cannot start), off, "
        "or auto (on in a GitHub Actions job, off elsewhere)",
    )


def sandbox_expose_option():
    return option(
        list,
        flag="--sandbox-expose",
        metavar="PATH[:rw]",
        help="a path the sandbox hides (e.g. under $HOME) shown to the tests, read-only unless "
        "PATH:rw (repeatable)",
    )


def sandbox_network_option():
    return option(
        "host", choices=("host", "none"), help="the tests' network: host, or none (loopback only)"
    )


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
        None, metavar="DIR", help="raw reports (default: next to --out)"
    )
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
        _print_dry_run(_select(settings, options, sink)[1], options.format, sink)
        return 0
    if options.from_log is not None:
        from ci_budget.app.run_log import read_log

        registrations, selection = _select(settings, options, sink)
        python = options.python or "python3"
        meta = _meta(settings, options, registrations, python, "script", None)
        return read_log(options, selection, meta, settings.root, sink)
    if options.drop_in and (why := nothing_to_run(settings, options, sink)) is not None:
        sink.echo(why)  # run_suite.py: a warning, nothing run, success
        return 0
    python = _interpreter(options.python) if options.python else sys.executable
    mode = options.mode or settings.config.mode
    policy = sandbox_policy(options.sandbox, options.sandbox_expose, options.sandbox_network)
    box, env = open_sandbox(settings.root, settings.config, policy, python,
                            settings.env.in_actions, sink.warn)  # fmt: skip
    if box is not None:
        sink.echo(f"sandbox: {box.describe()}")
    try:
        return _run(settings, options, sink, python, mode, box, env)
    finally:
        if box is not None:
            box.close()


def sandbox_policy(mode: str, expose, network: str):
    from ci_budget.runner.sandbox import SandboxPolicy

    return SandboxPolicy(mode, tuple(expose or ()), network)


def open_sandbox(root: Path, config, policy, python: str, in_actions: bool, warn):
    """(the run's sandbox or None, the tests' environment). The policy comes from the command
    line (the workflow), never from the config file, which in a GPU job is the PR's. A sandbox
    that cannot start is a one-line error."""
    from ci_budget.runner.environment import tests_env
    from ci_budget.runner.sandbox import SandboxError
    from ci_budget.runner.sandbox import open_sandbox as open_box
    from ci_budget.runner.sandbox_mounts import checkout_of

    env = tests_env(config.env_drop, config.env_keep)
    if policy.mode == "off" and in_actions:
        warn("the tests run without a sandbox (--sandbox off): their code can reach this "
             "runner's processes, files and credentials")  # fmt: skip
    try:
        return open_box(policy, python, checkout_of(root), env, in_actions), env
    except SandboxError as exc:
        raise AppError(f"sandbox: {exc}") from None


def _run(settings, options: RunOptions, sink: Sink, python: str, mode: str, box, env) -> int:
    from ci_budget.runner import preflight
    from ci_budget.runner import run as runner
    from ci_budget.runner.gpu import GpuProbe
    from ci_budget.runner.sandbox_mounts import checkout_of

    wrap = box.wrap(checkout_of(settings.root)) if box is not None else None
    # Started before the scan, read after it: the interpreter and GPU queries overlap our work.
    pytest_probe = preflight.PytestProbe(python, env, wrap) if mode == "pytest" else None
    gpu_probe = GpuProbe(settings.config.gpu_arch_map(), python=python, env=env, wrap=wrap)
    try:
        registrations, selection = _select(settings, options, sink)
        for job in selection.jobs:
            if (why := preflight.missing_selection(settings.root, job)) is not None:
                raise AppError(why)
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
        root=settings.root, config=settings.config, out=out, python=python, mode=mode,
        artifacts_dir=options.artifacts_dir or out.with_name(out.stem + "-artifacts"),
        timeout_per_file=options.timeout_per_file, grace=options.grace,
        heartbeat=options.heartbeat, fail_fast=options.fail_fast,
        retry=retry_rules(settings, options.retry), sandbox=box,
    )  # fmt: skip
    if options.drop_in:
        _print_dry_run(selection, "text", sink)
    if not jobs:
        sink.echo(f"nothing to run in partition {options.partition}; writing {out}")
    results = runner.run_jobs(jobs, skipped, meta, opts)
    sink.echo(f"results: {out}")
    return runner.exit_status(results)


def _select(settings, options: RunOptions, sink: Sink):
    """(registrations, the shard's selection)."""
    from ci_budget.app.numbers import note_uncovered, plan_numbers
    from ci_budget.runner.run import resolve_path
    from ci_budget.sharding.planners import parse_partition
    from ci_budget.sharding.select import SelectionError, select_jobs
    from ci_budget.workspace.rerun_files import rerun_files
    from ci_budget.workspace.scan import directory_order, scan_tree

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
            algorithm=config.planner.algorithm,
            weights=weights,
            backend=options.backend,
            nightly=options.nightly,
            resolve=lambda path: resolve_path(path, root),
            order=directory_order(root, config) if partition is None else None,
            extra=rerun_files(root, config) if options.specs else (),
        )
    except SelectionError as exc:
        raise AppError(str(exc)) from None
    for job in selection.jobs:
        job.timeout = file_timeout(config, options, job)
    return scan.registrations, selection


def file_timeout(config, options: RunOptions, job) -> float:
    """The job's per-file limit as run_suite.py sets it: --timeout-from-est-time, else
    --timeout-per-file, else the suite's own (read from the workflows), else the default; a
    flat limit grows by the retry increase when retries are on."""
    from ci_budget.config import est_time_timeout

    if options.timeout_from_est_time:
        return est_time_timeout(job.est_time)
    rule = config.suite_rule(job.suite) if options.timeout_per_file is None else None
    if isinstance(rule, str):
        return est_time_timeout(job.est_time)
    limit = options.timeout_per_file or rule or config.timeout_for(job.est_time)
    return limit + (options.retry.timeout_increase if options.retry else 0.0)


def _print_dry_run(selection, fmt: str, sink: Sink) -> None:
    if fmt == "json":
        files = [
            {
                "path": j.path,
                "est_time": j.est_time,
                "suite": j.suite,
                "backend": j.backend,
                "timeout": j.timeout,
            }  # fmt: skip
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
    sink.echo(f"would run {len(selection.jobs)} file(s), est total {secs(total)}:")
    for j in selection.jobs:
        where = f"{j.suite} ({j.backend})" if j.suite else "unregistered (github.rerun-dirs)"
        sink.echo(
            f"  {j.path}{''.join(j.selection)}  est {secs(j.est_time)}  timeout {secs(j.timeout)}"
            f"  {where}"
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


def _interpreter(name: str) -> str:
    """--python as an absolute path: tests run from the repository root, not from here."""
    import shutil

    if "/" in name:
        path = Path(name).expanduser().absolute()
        found = str(path) if path.is_file() else None
    else:
        found = shutil.which(name)
    if found is None:
        raise AppError(f"--python {name}: no such interpreter")
    return found
