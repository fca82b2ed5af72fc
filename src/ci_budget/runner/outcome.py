"""What one file's run amounts to: its status, classes and printed values read back from the
report files its pytest wrote, and the results file written from them."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from ci_budget.models import FileResult, RunResults
from ci_budget.results import printed, reportlog, timings
from ci_budget.results.phases import MESSAGE_LIMIT
from ci_budget.units import secs
from ci_budget.workspace.files import write_source


def printed_values(job, opts, art, stem, report) -> dict[str, list[str]]:
    """Values the tests printed: captured stdout from the reports, else the file's output."""
    rx = printed.value_regex(opts.config.arch.value_pattern)
    found: dict[str, list[str]] = {}
    if report is not None:
        found = printed.from_json_report(report, rx)
    if not found and opts.mode == "pytest":
        entries = []
        for line in read_lines(art / (stem + ".jsonl")):
            try:
                entries.append(json.loads(line))
            except (ValueError, RecursionError):
                continue
        found = printed.from_reportlog((e for e in entries if isinstance(e, dict)), rx)
    if not found:  # script mode, or pytest with capture off (`-s`)
        found = printed.from_log(read_lines(art / (stem + ".log")), job.path, rx)
    return found


def file_result(job, opts, art, stem, rc, timed_out, elapsed, kill_epoch) -> FileResult:
    report = None
    if opts.mode == "pytest":  # read once: a large suite's report is large
        try:
            report = json.loads((art / (stem + ".json")).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            report = None
    res = timed_result(job, opts, art, stem, rc, timed_out, elapsed, kill_epoch, report)
    res.printed = printed_values(job, opts, art, stem, report)
    return res


def timed_result(job, opts, art, stem, rc, timed_out, elapsed, kill_epoch, report) -> FileResult:
    res = FileResult(path=job.path, suite=job.suite, est_time=job.est_time, elapsed=elapsed,
                     exit_code=rc, selection=list(job.selection))  # fmt: skip
    if opts.mode == "script":  # per-file time only: no classes, nothing to leave unattributed
        res.status = "timeout" if timed_out else "passed" if rc == 0 else "failed"
        if rc is not None and rc < 0 and not timed_out:
            res.status, res.message = "crashed", f"killed by {signame(-rc)}"
        return res
    lines = read_lines(art / (stem + ".progress.jsonl")) + read_lines(art / (stem + ".jsonl"))
    rlog = reportlog.parse_reportlog(lines, source=str(art / (stem + ".jsonl")), strict=False)
    try:
        res.classes = timings.classes_from_json_report(report) if report is not None else []
    except ValueError:
        report = None
    finished = rlog.finished or report is not None
    if timed_out or not finished:
        res.in_flight = rlog.in_flight
        reportlog.charge_in_flight(rlog, kill_epoch)
        res.classes = rlog.classes()
    res.unattributed = timings.unattributed(elapsed, res.classes)
    if timed_out:
        res.status = "timeout"
        res.message = f"timed out after {secs(elapsed)}" + (
            f" in {res.in_flight}" if res.in_flight else ""
        )
    elif not finished:
        res.status = "crashed"
        how = f"killed by {signame(-rc)}" if rc is not None and rc < 0 else f"exited with {rc}"
        res.message = f"{how} before the test session finished" + (
            f" (in {res.in_flight})" if res.in_flight else ""
        )
    elif rc == 0:
        res.status = "passed"
    else:
        res.status = "failed"
        if rc == PYTEST_EXIT_NO_TESTS:
            res.message = "no tests collected (pytest exit 5)"
        elif rlog.collect_errors:
            res.message = "; ".join(rlog.collect_errors)[:MESSAGE_LIMIT]
        else:
            res.message = f"pytest exit {rc}"
    if rlog.problems:  # damaged report-log lines were skipped, the rest kept
        note = "skipped damaged report-log lines: " + "; ".join(rlog.problems)
        res.message = f"{res.message}; {note}" if res.message else note
    return res


def signame(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def write_results(results: RunResults, out: Path) -> None:
    """Atomic: a reader (or a later kill) sees the old file or the new one, never half."""
    write_source(out, results.model_dump_json(indent=2))


def read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


PYTEST_EXIT_NO_TESTS = 5
