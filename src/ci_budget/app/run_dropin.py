"""run_suite.py's side of `run` (it is the drop-in): its spellings mapped to ci-budget's own
options, its retries and per-file limits, its rule for a suite with nothing to run, and the
listing of what would run (which the drop-in prints first, as run_suite.py does).

Then `run --from-log`: the results file of a shard that an unchanged run_suite.py ran, read from
its output (the TIMINGS block) instead of running anything. The selection is the drop-in's
(the same flags: the same files, order and per-file limits), so every planned file is in the
results: measured when the block has it, not run when it does not (fail-fast stopped first).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.settings import AppError, Sink


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
    from ci_budget.runner.outcome import RetryRules

    if retry is None:
        return None
    patterns = settings.config.retry_patterns
    return RetryRules(retry.max_attempts, retry.wait, patterns.infra, patterns.never,
                      patterns.retriable)  # fmt: skip


def print_dry_run(selection, fmt: str, sink: Sink) -> None:
    from ci_budget.models import secs

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


NOT_IN_LOG = "not run: not in run_suite.py's TIMINGS block (an earlier file failed?)"


def read_log(options, selection, meta, root: Path, sink: Sink) -> int:
    """The results of the drop-in's `selection` from the log at `options.from_log`: exit 0 when
    its TIMINGS block was read, 1 when it has none (the results still list every planned file,
    as not run)."""
    from datetime import datetime, timezone

    from ci_budget.models import FileResult, RunResults
    from ci_budget.results.printed import parse_log
    from ci_budget.runner import run as runner
    from ci_budget.runner.outcome import write_results

    try:
        with open(options.from_log, encoding="utf-8", errors="replace") as log:
            timings = parse_log(log)
    except OSError as exc:
        raise AppError(f"--from-log {options.from_log}: {exc.strerror}") from None
    root = root.resolve()
    measured = {_relative(e.file, root): e for e in timings.entries}
    meta.finished_at = datetime.now(timezone.utc)
    files = [runner.skipped_result(s) for s in selection.skipped]
    for job in selection.jobs:
        entry = measured.pop(job.path, None)
        result = FileResult(path=job.path, suite=job.suite, est_time=job.est_time,
                            timeout=job.timeout, selection=list(job.selection))  # fmt: skip
        if entry is None:
            result.message = NOT_IN_LOG
        else:
            result.status, result.elapsed = entry.status, entry.elapsed
        files.append(result)
    for path, entry in measured.items():  # ran, though this shard's selection has no such file
        files.append(FileResult(path=path, status=entry.status, elapsed=entry.elapsed,
                                message="not in this shard's selection"))  # fmt: skip
        sink.warn(f"{options.from_log}:{entry.line}: {path} is not in this shard's selection")
    for problem in timings.problems:
        sink.warn(f"{options.from_log}:{problem.line}: {problem.message}")
    out = options.out if options.out.is_absolute() else Path.cwd() / options.out
    write_results(RunResults(meta=meta, files=files), out)
    ran = sum(1 for f in files if f.status != "not-run")
    sink.echo(
        f"read {ran} of {len(selection.jobs)} file(s) from {options.from_log}; results: {out}"
    )
    return 0 if timings.blocks else 1


def _relative(path: str, root: Path) -> str:
    """run_suite.py writes a path from its last `/sglang/` on, else absolute: repo-relative."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(root).as_posix()
        except ValueError:
            return path
    return path
