"""The files `run` runs: the shard's selection from the registry, each file's time limit, and the
dry-run listing of them."""

from __future__ import annotations

from ci_budget.app.errors import AppError
from ci_budget.app.sink import Sink
from ci_budget.units import secs


def select_run(settings, options, sink: Sink):
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


def file_timeout(config, options, job) -> float:
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


def print_dry_run(selection, fmt: str, sink: Sink) -> None:
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
