"""Per-class timings from pytest's machine-readable reports. Pure: data in, models out.

Two sources give the same `ClassTiming`s for the same run:
- a pytest-json-report dict, written once when the session finishes;
- a pytest-reportlog JSONL stream, written as each phase finishes, so it survives a timeout or a
  crash. A test with a `setup` report but no `teardown` report (or only a start marker) was
  running when the process died.

A test's outcome is derived from its phase outcomes in both cases, so the two agree:
a failed setup or teardown is an error, a skipped setup or call (skip, xfail) is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ci_budget.models import ClassTiming, FileResult, TestTiming

PHASES = ("setup", "call", "teardown")
START_MARKER = "CiBudgetTestStart"  # written by ci_budget.runner.pytest_progress at logstart
MESSAGE_LIMIT = 500


class ReportError(ValueError):
    """A report that cannot be read; the message names where."""


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """(file path, group) where group is `path::Class` or, for module-level tests, `path`.

    Parameters (`test_x[a::b/c]`) may contain `::` and `/`, so the bracket part is cut first.
    Nested classes group under the innermost class: every component but the test name.
    """
    head, sep, rest = nodeid.partition("::")
    if not sep:
        return head, head
    bracket = rest.find("[")
    if bracket >= 0:
        rest = rest[:bracket]
    parts = rest.split("::")
    if len(parts) <= 1:
        return head, head
    return head, head + "::" + "::".join(parts[:-1])


def normalise_properties(raw: Any) -> dict[str, Any]:
    """user_properties as a dict: json-report writes [{k: v}], reportlog writes [[k, v]]."""
    out: dict[str, Any] = {}
    if isinstance(raw, dict):
        return dict(raw)
    for item in raw or ():
        if isinstance(item, dict):
            out.update({str(k): v for k, v in item.items()})
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            out[str(item[0])] = item[1]
    return out


def _short(text: str | None) -> str | None:
    if not text:
        return None
    text = text.strip()
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


class _Test:
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


def outcome_of(setup: str | None, call: str | None, teardown: str | None) -> str:
    """A test's outcome from its phases' outcomes (None: the phase has no report)."""
    if teardown is None:
        return "running"
    if setup == "failed" or teardown == "failed":
        return "error"
    if setup == "skipped" or call == "skipped":
        return "skipped"
    if call == "failed":
        return "failed"
    return "passed"


def make_timing(
    nodeid: str,
    outcome: str,
    durations: tuple[float, float, float],
    props: dict[str, Any],
    message: str | None,
) -> TestTiming:
    timing = TestTiming(
        nodeid=nodeid,
        outcome=outcome,
        setup=durations[0],
        call=durations[1],
        teardown=durations[2],
        user_properties=props,
        message=message,
    )
    # Every field is given, so every instance's fields-set is the same: share one set
    # instead of ~700 bytes per test (a 100,000-test report keeps them all).
    object.__setattr__(timing, "__pydantic_fields_set__", _ALL_FIELDS)
    return timing


_ALL_FIELDS = set(TestTiming.model_fields)


COUNTERS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "errors"}


def _classes(tests: Iterable[_Test]) -> list[ClassTiming]:
    """Group tests by class in order of first appearance; one pass over the tests."""
    groups: dict[str, list[TestTiming]] = {}
    for test in tests:
        groups.setdefault(split_nodeid(test.nodeid)[1], []).append(test.timing())
    return _class_timings(groups)


def _class_timings(groups: dict[str, list[TestTiming]]) -> list[ClassTiming]:
    out = []
    for name, cases in groups.items():
        total = sum(c.total for c in cases)
        setup, teardown = cases[0].setup, cases[-1].teardown
        counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        for c in cases:
            key = COUNTERS.get(c.outcome)
            if key:
                counts[key] += 1
        out.append(
            ClassTiming(
                name=name,
                class_setup=setup,
                tests=max(0.0, total - setup - teardown),
                class_teardown=teardown,
                total=total,
                complete=all(c.outcome != "running" for c in cases),
                test_cases=cases,
                **counts,
            )
        )
    return out


def crash_message(phase: dict) -> str | None:
    crash = phase.get("crash")
    if isinstance(crash, dict) and crash.get("message"):
        return _short(str(crash["message"]))
    longrepr = phase.get("longrepr")
    if isinstance(longrepr, str) and longrepr.strip():
        return _short(longrepr.strip().splitlines()[-1])
    return None


def _json_timing(i: int, item: Any) -> TestTiming:
    """One json-report test (a dict from json.loads) as a TestTiming."""
    if not isinstance(item, dict) or not isinstance(item.get("nodeid"), str):
        raise ReportError(f"json report: tests[{i}] has no nodeid")
    durations = [0.0, 0.0, 0.0]
    outcomes: list[str | None] = [None, None, None]
    message = None
    for k, when in enumerate(PHASES):
        phase = item.get(when)
        if isinstance(phase, dict):
            durations[k] = float(phase.get("duration", 0.0) or 0.0)
            outcome = str(phase.get("outcome", "passed"))
            outcomes[k] = outcome
            if outcome == "failed" and message is None:
                message = crash_message(phase)
    setup, call, teardown = outcomes
    if teardown is None and setup is not None:
        teardown = "passed"  # json-report omits phases that did not run; the report finished
    props = normalise_properties(item.get("user_properties"))
    outcome = outcome_of(setup, call, teardown)
    return make_timing(item["nodeid"], outcome, tuple(durations), props, message)


def classes_from_json_report(data: dict) -> list[ClassTiming]:
    raw = data.get("tests")
    if not isinstance(raw, list):
        raise ReportError("json report: missing 'tests' list")
    groups: dict[str, list[TestTiming]] = {}
    for i, item in enumerate(raw):
        timing = _json_timing(i, item)
        groups.setdefault(split_nodeid(timing.nodeid)[1], []).append(timing)
    return _class_timings(groups)


def _reportlog_message(longrepr: Any) -> str | None:
    if isinstance(longrepr, dict):
        crash = longrepr.get("reprcrash")
        if isinstance(crash, dict) and crash.get("message"):
            return _short(str(crash["message"]))
        return None
    if isinstance(longrepr, str) and longrepr.strip():
        return _short(longrepr.strip().splitlines()[-1])
    return None


class ReportLog:
    """What a (possibly cut-short) reportlog says: tests, collection errors, session end."""

    def __init__(self) -> None:
        self.tests: dict[str, _Test] = {}
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
            log.tests.setdefault(nodeid, _Test(nodeid))
            log.started[nodeid] = float(entry.get("start") or 0.0)
    elif kind == "TestReport":
        nodeid, when = entry.get("nodeid"), entry.get("when")
        if not isinstance(nodeid, str) or when not in PHASES:
            raise ReportError(f"{source}:{number}: TestReport without nodeid/when")
        test = log.tests.get(nodeid)
        if test is None:
            test = log.tests[nodeid] = _Test(nodeid)
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


def unattributed(wall: float, classes: Iterable[ClassTiming]) -> float:
    """Wall time not inside any test phase: start-up, imports, collection. Never negative."""
    return max(0.0, wall - sum(c.total for c in classes))


def file_results_from_json_report(data: dict) -> list[FileResult]:
    """One FileResult per test file of a json report; elapsed is the sum of its test phases."""
    raw = data.get("tests")
    if not isinstance(raw, list):
        raise ReportError("json report: missing 'tests' list")
    files = JsonReportFiles()
    for item in raw:
        files.add_test(item)
    for item in data.get("collectors") or ():
        files.add_collector(item)
    return files.results()


class JsonReportFiles:
    """`file_results_from_json_report`, fed one test (and collector) at a time, so a reader can
    stream a large report instead of holding all of it: only the timings are kept."""

    def __init__(self) -> None:
        self.count = 0
        self.by_file: dict[str, dict[str, list[TestTiming]]] = {}  # path -> group -> tests
        self.collect_failed: dict[str, str] = {}

    def add_test(self, item: Any) -> None:
        self.add_timing(_json_timing(self.count, item))

    def add_timing(self, timing: TestTiming) -> None:
        self.count += 1
        path, group = split_nodeid(timing.nodeid)
        self.by_file.setdefault(path, {}).setdefault(group, []).append(timing)

    def add_collector(self, item: Any) -> None:
        if isinstance(item, dict) and item.get("outcome") == "failed":
            path = split_nodeid(str(item.get("nodeid") or ""))[0]
            if path:
                self.collect_failed.setdefault(path, crash_message(item) or "collection failed")

    def results(self) -> list[FileResult]:
        by_file, collect_failed = self.by_file, self.collect_failed
        results = []
        for path in [*by_file, *(p for p in collect_failed if p not in by_file)]:
            classes = _class_timings(by_file.get(path, {}))
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
