"""Per-class and per-file timings of a pytest run: the one parser to `ClassTiming`. Pure: data
in, models out.

Two channels feed one accumulator (`TestPhases`, a test's phases as they arrive) and one
grouping by class:
- pytest-json-report, written once when the session finishes: the timings of a file that
  finished, and its per-file results;
- the pytest-reportlog JSONL stream, written as each phase finishes, so it survives a timeout
  or a crash: a test with a `setup` report but no `teardown` report (or only a start marker) was
  running when the process died; `charge_in_flight` gives it the time until the kill.
Both give the same `ClassTiming`s for the same run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ci_budget.models import ClassTiming, FileResult, TestTiming
from ci_budget.results.phases import (
    PHASES,
    ReportError,
    class_timings,
    crash_message,
    make_timing,
    normalise_properties,
    outcome_of,
    short_message,
    split_nodeid,
)

START_MARKER = "CiBudgetTestStart"  # written by ci_budget.runner.pytest_progress at logstart


# ==== One test's phases as they arrive, grouped by class ======================================


class TestPhases:
    """One test's phases as they arrive."""

    __slots__ = ("nodeid", "durations", "outcomes", "props", "message")

    def __init__(self, nodeid: str):
        self.nodeid = nodeid
        self.durations: dict[str, float] = {}
        self.outcomes: dict[str, str] = {}
        self.props: dict[str, Any] = {}
        self.message: str | None = None

    def phase(self, when: str, outcome: str, duration: float, message: str | None) -> None:
        self.durations[when] = float(duration or 0.0)
        self.outcomes[when] = outcome
        if outcome == "failed" and self.message is None:
            self.message = message

    @property
    def finished(self) -> bool:
        return "teardown" in self.outcomes

    def outcome(self) -> str:
        o = self.outcomes
        return outcome_of(o.get("setup"), o.get("call"), o.get("teardown"))

    def timing(self) -> TestTiming:
        d = self.durations
        durations = (d.get("setup", 0.0), d.get("call", 0.0), d.get("teardown", 0.0))
        return make_timing(self.nodeid, self.outcome(), durations, self.props, self.message)


def _classes(tests: Iterable[TestPhases]) -> list[ClassTiming]:
    """Group tests by class in order of first appearance; one pass over the tests."""
    groups: dict[str, list[TestTiming]] = {}
    for test in tests:
        groups.setdefault(split_nodeid(test.nodeid)[1], []).append(test.timing())
    return class_timings(groups)


# ==== pytest-json-report: a file that finished ================================================


def json_phases(i: int, item: Any) -> TestPhases:
    """One json-report test (a dict from json.loads) as its phases."""
    if not isinstance(item, dict) or not isinstance(item.get("nodeid"), str):
        raise ReportError(f"json report: tests[{i}] has no nodeid")
    test = TestPhases(item["nodeid"])
    for when in PHASES:
        phase = item.get(when)
        if isinstance(phase, dict):
            outcome = str(phase.get("outcome", "passed"))
            message = crash_message(phase) if outcome == "failed" else None
            test.phase(when, outcome, phase.get("duration", 0.0), message)
    if "teardown" not in test.outcomes and "setup" in test.outcomes:
        test.outcomes["teardown"] = (
            "passed"  # json-report omits phases that did not run; the report finished
        )
    test.props = normalise_properties(item.get("user_properties"))
    return test


def classes_from_json_report(data: dict) -> list[ClassTiming]:
    raw = data.get("tests")
    if not isinstance(raw, list):
        raise ReportError("json report: missing 'tests' list")
    return _classes(json_phases(i, item) for i, item in enumerate(raw))


def unattributed(wall: float, classes: Iterable[ClassTiming]) -> float:
    """Wall time not inside any test phase: start-up, imports, collection. Never negative."""
    return max(0.0, wall - sum(c.total for c in classes))


def file_results_from_json_report(data: dict) -> list[FileResult]:
    """One FileResult per test file of a json report; elapsed is the sum of its test phases."""
    raw = data.get("tests")
    if not isinstance(raw, list):
        raise ReportError("json report: missing 'tests' list")
    by_file: dict[str, dict[str, list[TestTiming]]] = {}  # path -> group -> tests
    for i, item in enumerate(raw):
        timing = json_phases(i, item).timing()
        path, group, _ = split_nodeid(timing.nodeid)
        by_file.setdefault(path, {}).setdefault(group, []).append(timing)
    collect_failed: dict[str, str] = {}
    for item in data.get("collectors") or ():
        if isinstance(item, dict) and item.get("outcome") == "failed":
            path = split_nodeid(str(item.get("nodeid") or ""))[0]
            if path:
                collect_failed.setdefault(path, crash_message(item) or "collection failed")
    results = []
    for path in [*by_file, *(p for p in collect_failed if p not in by_file)]:
        classes = class_timings(by_file.get(path, {}))
        bad = any(c.failed or c.errors for c in classes) or path in collect_failed
        results.append(
            FileResult(
                path=path,
                elapsed=sum(c.total for c in classes),
                status="failed" if bad else "passed",
                classes=classes,
                message=collect_failed.get(path),
            )
        )
    return results


# ==== The reportlog stream: a file killed mid-run =============================================


def _reportlog_message(longrepr: Any) -> str | None:
    if isinstance(longrepr, dict):
        crash = longrepr.get("reprcrash")
        if isinstance(crash, dict) and crash.get("message"):
            return short_message(str(crash["message"]))
        return None
    if isinstance(longrepr, str) and longrepr.strip():
        return short_message(longrepr.strip().splitlines()[-1])
    return None


class ReportLog:
    """What a (possibly cut-short) reportlog says: tests, collection errors, session end."""

    def __init__(self) -> None:
        self.tests: dict[str, TestPhases] = {}
        self.collect_errors: list[str] = []
        self.finished = False
        self.exitstatus: int | None = None
        self.started: dict[str, float] = {}  # nodeid -> start time, from the progress plugin
        self.problems: list[str] = []  # damaged lines skipped (strict=False)

    @property
    def in_flight(self) -> str | None:
        """The last test that started and did not finish."""
        for nodeid in reversed(self.tests):
            if not self.tests[nodeid].finished:
                return nodeid
        return None

    def classes(self) -> list[ClassTiming]:
        return _classes(self.tests.values())


def parse_reportlog(
    lines: Iterable[str], source: str = "reportlog", strict: bool = True
) -> ReportLog:
    """Read JSONL lines; a torn last line (the writer was killed mid-write) is ignored.

    strict=False keeps going past bad lines, noting each in `problems`: the runner must not
    drop every measured class because of one damaged line."""
    log = ReportLog()
    pending: tuple[int, str] | None = None
    for number, line in enumerate(lines, 1):
        if pending is not None:
            problem = f"{source}:{pending[0]}: invalid JSON: {pending[1]}"
            if strict:
                raise ReportError(problem)
            log.problems.append(problem)
            pending = None
        line = line.strip()
        if not line:
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            pending = (number, exc.msg)  # fatal only if more lines follow
            continue
        except RecursionError:
            pending = (number, "nested too deeply")
            continue
        try:
            if not isinstance(entry, dict):
                raise ReportError(f"{source}:{number}: expected a JSON object")
            _reportlog_entry(log, entry, source, number)
        except ReportError as exc:
            if strict:
                raise
            log.problems.append(str(exc))
    return log


def _reportlog_entry(log: ReportLog, entry: dict, source: str, number: int) -> None:
    kind = entry.get("$report_type")
    if kind == START_MARKER:
        nodeid = entry.get("nodeid")
        if isinstance(nodeid, str):
            log.tests.setdefault(nodeid, TestPhases(nodeid))
            log.started[nodeid] = float(entry.get("start") or 0.0)
    elif kind == "TestReport":
        nodeid, when = entry.get("nodeid"), entry.get("when")
        if not isinstance(nodeid, str) or when not in PHASES:
            raise ReportError(f"{source}:{number}: TestReport without nodeid/when")
        test = log.tests.get(nodeid)
        if test is None:
            test = log.tests[nodeid] = TestPhases(nodeid)
        test.phase(
            when,
            str(entry.get("outcome", "passed")),
            entry.get("duration", 0.0),
            _reportlog_message(entry.get("longrepr")),
        )
        props = entry.get("user_properties")
        if props:
            test.props = normalise_properties(props)
    elif kind == "CollectReport" and entry.get("outcome") == "failed":
        msg = _reportlog_message(entry.get("longrepr")) or "collection failed"
        log.collect_errors.append(f"{entry.get('nodeid') or '<session>'}: {msg}")
    elif kind == "SessionFinish":
        log.finished = True
        status = entry.get("exitstatus")
        log.exitstatus = status if isinstance(status, int) else None


def charge_in_flight(log: ReportLog, until: float) -> None:
    """Give the test that was running the time from its start marker to `until` (epoch seconds,
    when the runner killed it or saw it die), in the phase it was in, so its class is charged
    for a hang in setUpClass instead of the time vanishing into `unattributed`."""
    for nodeid, start in log.started.items():
        test = log.tests[nodeid]
        if test.finished or not start:
            continue
        spent = max(0.0, until - start - sum(test.durations.values()))
        for when in PHASES:
            if when not in test.durations:
                test.durations[when] = spent
                break
