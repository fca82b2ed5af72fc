"""What runs print, read into data (and the TIMINGS block written). Pure: text in, data out.

Values tests print (first section), such as sglang's KL helpers' `avg_kl_div=1.2e-06`. A value
pattern is literal text with one `<number>` placeholder (default `avg_kl_div=<number>`). Three
sources, all keyed by the test's node id (`path::Class::test`):
- pytest-json-report: each test's captured stdout of the call phase (`call.stdout`);
- pytest-reportlog: the `Captured stdout call` section of the call report;
- a file's own output (script mode, or pytest with capture off): lines after a test-start marker,
  `[CI Test Method] Class.test` (what sglang's `CustomTestCase.setUp` prints) or
  `[ci-budget test] path::Class::test` (the runner's pytest plugin, when capture is off), up to
  unittest's failure report, which repeats values and belongs to no test.
Only the matching text is kept (`avg_kl_div=1.2e-06`), the last `KEEP` per test.

The TIMINGS block (second section) sglang's run_suite.py prints, written (`timings_block`, after a
run) and read back from a job's output (`parse_log`, for `run --from-log`): one home for its
format. A block is one JSON object per executed file between two marker lines; GitHub prefixes
every log line with a timestamp. A log may hold several blocks (a suite run twice in one job); a
file seen twice keeps its latest entry, as run_suite keeps only the latest attempt. A block cut off
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

# ==== Values tests print ======================================================================

DEFAULT_PATTERN = "avg_kl_div=<number>"
PLACEHOLDER = "<number>"
KEEP = 20
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf)"
_SGLANG_MARK = re.compile(r"\[CI Test Method\] (\w+)\.(\w+)")
_OWN_MARK = re.compile(r"\[ci-budget test\] (\S+)")
# unittest's and pytest's failure reports repeat values and belong to no test
_REPORT_START = re.compile(r"(?:={10,}|-{70}|_{10,}|Ran \d+ tests? in )")


class PatternError(ValueError):
    """A value pattern without exactly one `<number>`."""


def value_regex(pattern: str) -> re.Pattern:
    """The regex of a value pattern; group 1 is the number."""
    if pattern.count(PLACEHOLDER) != 1:
        raise PatternError(f"value pattern {pattern!r}: needs exactly one {PLACEHOLDER}")
    before, after = pattern.split(PLACEHOLDER)
    # `avg_kl_div=` must not match inside `my_avg_kl_div=`
    lead = r"(?<![\w.])" if before[:1].isalnum() or before[:1] == "_" else ""
    return re.compile(f"{lead}{re.escape(before)}({_NUMBER}){re.escape(after)}")


def matches(text: str, rx: re.Pattern) -> list[str]:
    return [m.group(0) for m in rx.finditer(text or "")]


def last_value(printed: Iterable[str], rx: re.Pattern) -> float | None:
    """The number of the last printed text that matches; None when none does."""
    value = None
    for text in printed:
        m = rx.search(text)
        if m:
            value = float(m.group(1))
    return value


def _keep(out: dict[str, list[str]], nodeid: str, found: list[str]) -> None:
    if found:
        kept = out.setdefault(nodeid, [])
        kept.extend(found)
        del kept[:-KEEP]


def from_json_report(data: dict, rx: re.Pattern) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in data.get("tests") or ():
        if isinstance(item, dict) and isinstance(item.get("call"), dict):
            _keep(out, str(item.get("nodeid")), matches(str(item["call"].get("stdout") or ""), rx))
    return out


def from_reportlog(entries: Iterable[dict], rx: re.Pattern) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry in entries:
        if entry.get("$report_type") != "TestReport" or entry.get("when") != "call":
            continue
        for section in entry.get("sections") or ():
            if (
                isinstance(section, list)
                and len(section) == 2
                and section[0] == "Captured stdout call"
            ):
                _keep(out, str(entry.get("nodeid")), matches(str(section[1]), rx))
    return out


def from_log(lines: Iterable[str], path: str, rx: re.Pattern) -> dict[str, list[str]]:
    """Values in a file's own output, given to the test whose start marker came last."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        mark = _SGLANG_MARK.search(line)
        own = _OWN_MARK.search(line) if mark is None else None
        if mark:
            current = f"{path}::{mark.group(1)}::{mark.group(2)}"
        elif own:
            current = own.group(1)
        elif _REPORT_START.match(line):
            current = None
        elif current is not None:
            _keep(out, current, matches(line, rx))
    return out


# ==== The TIMINGS block =======================================================================

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
