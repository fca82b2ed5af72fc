"""The TIMINGS block sglang's run_suite.py prints, written (`timings_block`, after a run) and read
back from a job's output (`parse_log`, for `run --from-log`): one home for its format. Pure.

A block is one JSON object per executed file between two marker lines; GitHub prefixes every
log line with a timestamp. A log may hold several blocks (a suite run twice in one job); a file
seen twice keeps its latest entry, as run_suite keeps only the latest attempt. A block cut off
by the end of the log keeps its complete lines. Problems never stop the parse: each is one
`Problem` (its line in the log, 0 for the log as a whole), and the rest of the log is still read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_budget.models import FileResult, FileStatus, Problem
from ci_budget.results.phases import same_file

BEGIN = "========== TIMINGS BEGIN =========="
END = "========== TIMINGS END =========="

_STAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
_TIMEOUT = re.compile(r"TIMEOUT: (\S+) after ")
_WORKSPACE = re.compile(r"^/.*?/_?work/[^/]+/[^/]+/(?P<rel>.+)$")
EXCERPT = 80


@dataclass(frozen=True)
class Entry:
    file: str
    status: FileStatus  # passed / failed / timeout
    elapsed: float
    line: int  # 1-based line of the entry in the log


@dataclass
class LogTimings:
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    blocks: int = 0
    lines: int = 0


def timings_block(files: Iterable[FileResult]) -> str:
    """The block for the files that ran, byte-compatible with run_suite.py's for its scrapers:
    one `{"file", "passed", "elapsed"}` object a line, in whole seconds, a timeout's limit as
    its time (as run_suite.py writes them)."""
    rows = [BEGIN]
    for f in files:
        if f.status != "not-run":
            took = f.timeout if f.status == "timeout" and f.timeout else f.elapsed
            rows.append(json.dumps({"file": f.path, "passed": f.status == "passed",
                                    "elapsed": round(took)}))  # fmt: skip
    return "\n".join([*rows, END]) + "\n"


def unstamped(line: str) -> str:
    """The line without GitHub's `2026-08-21T10:11:12.1234567Z` prefix and its line end."""
    return _STAMP.sub("", line.rstrip("\r\n"), count=1)


def excerpt(text: str) -> str:
    """A short, escaped rendering of untrusted log text: no newlines, no workflow commands."""
    short = text if len(text) <= EXCERPT else text[:EXCERPT] + "…"
    return ascii(short)


def repo_path(path: str) -> str:
    """A checkout-absolute path (`/home/runner/work/r/r/test/x.py`) made repository-relative."""
    found = _WORKSPACE.match(path)
    return found.group("rel") if found else path


def _entry(text: str) -> tuple[str, bool, float] | str:
    """(file, passed, elapsed) or why the line is not a timing entry."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg})"
    except ValueError as exc:  # valid JSON Python refuses, such as a 5,000-digit number
        return f"not readable JSON ({exc})"
    except RecursionError:  # json.loads recurses once per level of nesting
        return "not JSON (nested too deeply)"
    if not isinstance(data, dict):
        return "not a JSON object"
    path, passed, elapsed = data.get("file"), data.get("passed"), data.get("elapsed")
    if not isinstance(path, str) or not path.strip() or not path.isprintable():
        return "'file' is not a path"
    if not isinstance(passed, bool):
        return "'passed' is not true/false"
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        return "'elapsed' is not a number"
    if not math.isfinite(elapsed) or elapsed < 0:
        return "'elapsed' is not a finite non-negative number"
    return repo_path(path.strip()), passed, float(elapsed)


class _Parser:
    def __init__(self) -> None:
        self.out = LogTimings()
        self.latest: dict[str, Entry] = {}
        self.timed_out: set[str] = set()
        self.block_start = 0  # line of the open block's BEGIN; 0 when none is open
        self.block_entries = 0

    def feed(self, number: int, raw: str) -> None:
        stripped = unstamped(raw).strip()
        if self.block_start:
            self._in_block(number, stripped)
            return
        if stripped == BEGIN:
            self._open(number)
        elif stripped == END:
            self.out.problems.append(
                Problem(file="log", line=number, message="TIMINGS END without a BEGIN; ignored")
            )
        elif timed := _TIMEOUT.search(stripped):
            self.timed_out.add(timed.group(1))

    def _open(self, number: int) -> None:
        self.block_start, self.block_entries = number, 0
        self.out.blocks += 1

    def _in_block(self, number: int, text: str) -> None:
        if text == END:
            self.block_start = 0
            return
        if text == BEGIN:
            self._truncated(number)
            self._open(number)
            return
        if not text:
            return
        parsed = _entry(text)
        if isinstance(parsed, str):
            self.out.problems.append(
                Problem(
                    file="log",
                    line=number,
                    message=f"not a timing entry: {parsed}: {excerpt(text)}",
                )
            )
            return
        path, passed, elapsed = parsed
        self.block_entries += 1
        status: FileStatus = "passed" if passed else "failed"
        self.latest.pop(path, None)  # re-insert: the latest entry of a file goes last
        self.latest[path] = Entry(path, status, elapsed, number)

    def _truncated(self, number: int) -> None:
        self.out.problems.append(
            Problem(
                file="log",
                line=self.block_start,
                message=f"TIMINGS block not closed before line {number} (log cut off?); "
                f"kept its {self.block_entries} complete entries",
            )
        )

    def finish(self, lines: int) -> LogTimings:
        if self.block_start:
            self._truncated(lines + 1)
        out = self.out
        out.lines = lines
        for entry in self.latest.values():
            if entry.status == "failed" and self._timed_out(entry.file):
                entry = Entry(entry.file, "timeout", entry.elapsed, entry.line)
            out.entries.append(entry)
        if not out.blocks:
            out.problems.append(
                Problem(file="log", line=0, message=f"no TIMINGS block in {lines} lines")
            )
        return out

    def _timed_out(self, path: str) -> bool:
        # run_suite's TIMEOUT line names the file as registered: absolute, or relative to test/
        return any(same_file(path, repo_path(name)) for name in self.timed_out)


def parse_log(lines: Iterable[str]) -> LogTimings:
    """Every TIMINGS entry of one job's log (latest per file) and every problem met."""
    parser = _Parser()
    number = 0
    for number, raw in enumerate(lines, start=1):  # noqa: B007 - the count is used below
        parser.feed(number, raw)
    return parser.finish(number)
