"""run_suite.py's side of `run` (it is the drop-in): its spellings mapped to ci-budget's own
options, its retries and per-file limits, its rule for a suite with nothing to run, and the
listing of what would run (which the drop-in prints first, as run_suite.py does)."""

from __future__ import annotations

from dataclasses import dataclass

from ci_budget.app.settings import AppError, Sink
from ci_budget.units import secs


@dataclass
class Retry:
    """run_suite.py's --enable-retry: a file that times out, or fails in a way the
    repository's patterns call retriable, runs again."""

    max_attempts: int = 2
    wait: float = 60.0
    timeout_increase: float = 600.0  # added to flat per-file timeouts


def drop_in_options(options):
    """run_suite.py's spellings as ci-budget's own: --auto-partition-id/-size as --partition,
    --partition-model-file as --partition-model, --hw as --backend with `python3 FILE -f`."""
    import dataclasses
    import shutil

    pid, size = options.auto_partition_id, options.auto_partition_size
    changes: dict = {}
    if (pid is None) != (size is None):
        raise AppError("--auto-partition-id and --auto-partition-size go together")
    if size is not None:
        if options.partition:
            raise AppError("--partition or --auto-partition-id/-size, not both")
        changes["partition"] = f"{pid}/{size}"
    if options.partition_model_file is not None:
        if options.partition_model is not None:
            raise AppError("--partition-model or --partition-model-file, not both")
        changes["partition_model"] = options.partition_model_file
    if options.hw is not None:
        if options.backend not in (None, options.hw):
            raise AppError("--hw and --backend name different backends")
        changes["backend"] = options.hw
        # run_suite.py runs `python3 FILE -f` with the python3 on PATH
        changes["python"] = options.python or shutil.which("python3")
        changes["mode"] = options.mode or "script"
    return dataclasses.replace(options, **changes) if changes else options


def nothing_to_run(settings, options, sink: Sink) -> str | None:
    """run_suite.py runs nothing and succeeds for a suite no file of that backend registers."""
    from ci_budget.sharding.select import SelectionError, suite_pool
    from ci_budget.workspace.scan import scan_tree

    if options.specs:
        return None
    registrations = scan_tree(settings.root, settings.config).registrations
    empty = []
    for suite in options.suites:
        try:
            pool = suite_pool(registrations, [suite], options.backend, options.nightly)
        except SelectionError:  # an unknown suite, or none of this backend: a warning there
            pool = []
        if not pool:
            empty.append(suite)
    if len(empty) < len(options.suites):
        return None
    hw = options.backend or "any backend"
    return f"No tests found for hw={hw}, suite={', '.join(empty)}, nightly={options.nightly}"


def retry_rules(settings, retry: Retry | None):
    from ci_budget.runner.retry import RetryRules

    if retry is None:
        return None
    patterns = settings.config.retry_patterns
    return RetryRules(retry.max_attempts, retry.wait, patterns.infra, patterns.never,
                      patterns.retriable)  # fmt: skip


def print_dry_run(selection, fmt: str, sink: Sink) -> None:
    if fmt == "json":
        keys = ("path", "est_time", "suite", "backend")
        files = [
            {k: getattr(j, k) for k in (*keys, "timeout")}
            | ({"selection": j.selection} if j.selection else {})
            for j in selection.jobs
        ]
        skipped = [{k: getattr(r, k) for k in (*keys, "reason")} for r in selection.skipped]
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
