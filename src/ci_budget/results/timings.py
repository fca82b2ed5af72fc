"""Per-class and per-file timings from a pytest-json-report dict, written once when the
session finishes. Pure: data in, models out. The reportlog stream (which survives a crash) is
read by `results.reportlog`; both give the same `ClassTiming`s for the same run.
"""

from __future__ import annotations

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
    split_nodeid,
)


def json_timing(i: int, item: Any) -> TestTiming:
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
        timing = json_timing(i, item)
        groups.setdefault(split_nodeid(timing.nodeid)[1], []).append(timing)
    return class_timings(groups)


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
        timing = json_timing(i, item)
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
