"""Values tests print, such as sglang's KL helpers' `avg_kl_div=1.2e-06`. Pure: text in, data out.

A value pattern is literal text with one `<number>` placeholder (default `avg_kl_div=<number>`).
Three sources, all keyed by the test's node id (`path::Class::test`):
- pytest-json-report: each test's captured stdout of the call phase (`call.stdout`);
- pytest-reportlog: the `Captured stdout call` section of the call report;
- a file's own output (script mode, or pytest with capture off): lines after a test-start marker,
  `[CI Test Method] Class.test` (what sglang's `CustomTestCase.setUp` prints) or
  `[ci-budget test] path::Class::test` (the runner's pytest plugin, when capture is off), up to
  unittest's failure report, which repeats values and belongs to no test.
Only the matching text is kept (`avg_kl_div=1.2e-06`), the last `KEEP` per test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
