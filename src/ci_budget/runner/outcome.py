"""What one file's run amounts to.

- The files the tests wrote, taken back as data. The report files (pytest-json-report,
  pytest-reportlog, the progress stream) are written by the tests' process, so they are
  whatever the tests made them: a symlink to the runner's secrets, a FIFO that blocks a reader
  forever, a file of many gigabytes. ci-budget opens them only inside the folder it made, never
  through a symlink, only as regular files, and only up to a size cap, then copies them into the
  artifacts folder it owns; everything later reads those copies.
- Its status, classes and printed values read back from those report files, and the results
  file written from them.
- Whether a failed file runs again (`run --enable-retry`, as run_suite.py's). A timeout is
  retried (a stuck server or device, usually). A failure is retried when its output matches an
  infra pattern; else not when it matches a pattern of a real code error; else when it matches a
  retriable pattern or shows an AssertionError. Patterns are regular expressions, searched
  case-insensitively; `AssertionError` is matched as written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ci_budget.models import FileResult, RunResults, secs
from ci_budget.results import printed, timings
from ci_budget.results.phases import MESSAGE_LIMIT
from ci_budget.workspace.files import write_source

MAX_REPORT_BYTES = 64 * 1024 * 1024
SUFFIXES = (".json", ".jsonl", ".progress.jsonl")


def read_capped(folder: Path, name: str, cap: int = MAX_REPORT_BYTES) -> bytes | str | None:
    """The bytes of `folder/name` when it is a regular file of at most `cap` bytes; None when
    it is absent; a one-line reason (str) when it is there but refused."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{name}: not a regular file ({exc.strerror})"
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return f"{name}: not a regular file"
        data = fh.read(cap + 1)
    if len(data) > cap:
        return f"{name}: over {cap // (1024 * 1024)} MiB"
    return data


def tail(folder: Path, name: str, size: int = 4096) -> bytes:
    """The last `size` bytes of a file the tests are still writing (same rules), or b""."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(folder / name, flags)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return b""
        fh.seek(max(0, st.st_size - size))
        return fh.read(size)


def collect(out: Path, art: Path, stem: str) -> list[str]:
    """Copy the file's reports from `out` into `art`; the reasons for any refused."""
    problems = []
    for suffix in SUFFIXES:
        got = read_capped(out, stem + suffix)
        if isinstance(got, bytes):
            _write_new(art / (stem + suffix), got)
        elif isinstance(got, str):
            problems.append(f"report file refused: {got}")
    return problems


def _write_new(path: Path, data: bytes) -> None:
    """A new file: whatever stood at `path` (a planted symlink too) is removed, not followed."""
    path.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags, 0o644), "wb") as fh:
        fh.write(data)


def clear(folder: Path) -> None:
    """Empty the tests' folder between files (nothing planted by one file is read for the
    next)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700, exist_ok=True)


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
    rlog = timings.parse_reportlog(lines, source=str(art / (stem + ".jsonl")), strict=False)
    try:
        res.classes = timings.classes_from_json_report(report) if report is not None else []
    except ValueError:
        report = None
    finished = rlog.finished or report is not None
    if timed_out or not finished:
        res.in_flight = rlog.in_flight
        timings.charge_in_flight(rlog, kill_epoch)
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


@dataclass
class RetryRules:
    max_attempts: int = 2
    wait: float = 60.0
    infra: list[str] = field(default_factory=list)
    never: list[str] = field(default_factory=list)
    retriable: list[str] = field(default_factory=list)


def _first(patterns: list[str], text: str) -> str | None:
    for pattern in patterns:
        try:
            if re.search(pattern, text, re.IGNORECASE):
                return pattern
        except re.error:
            continue  # a repository's bad pattern matches nothing
    return None


def retry_reason(rules: RetryRules, status: str, output: str) -> str | None:
    """Why a file with this status and output runs again, or None."""
    if status == "passed":
        return None
    if status == "timeout":
        return "timed out"
    if status not in ("failed", "crashed"):
        return None  # cancelled, or not run
    if hit := _first(rules.infra, output):
        return f"infra pattern {hit!r}"
    if _first(rules.never, output):
        return None
    if hit := _first(rules.retriable, output):
        return f"retriable pattern {hit!r}"
    if "AssertionError" in output:
        return "AssertionError"
    return None
