"""`run --from-log`: the results file of a shard that an unchanged run_suite.py ran, read from
its output (the TIMINGS block) instead of running anything. The selection is the drop-in's
(the same flags: the same files, order and per-file limits), so every planned file is in the
results: measured when the block has it, not run when it does not (fail-fast stopped first)."""

from __future__ import annotations

from pathlib import Path

from ci_budget.app.settings import AppError, Sink

NOT_IN_LOG = "not run: not in run_suite.py's TIMINGS block (an earlier file failed?)"


def read_log(options, selection, meta, root: Path, sink: Sink) -> int:
    """The results of the drop-in's `selection` from the log at `options.from_log`: exit 0 when
    its TIMINGS block was read, 1 when it has none (the results still list every planned file,
    as not run)."""
    from datetime import datetime, timezone

    from ci_budget.history.logs import parse_log
    from ci_budget.models import FileResult, RunResults
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
