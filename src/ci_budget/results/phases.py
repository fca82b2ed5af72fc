"""A test's phases -> its outcome and `TestTiming`; tests grouped into `ClassTiming`s.
Shared by both report readers (json-report and reportlog), so they agree. Pure.

A failed setup or teardown is an error, a skipped setup or call (skip, xfail) is skipped.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ci_budget.models import ClassTiming, TestTiming

PHASES = ("setup", "call", "teardown")
T = TypeVar("T")
MESSAGE_LIMIT = 500


class ReportError(ValueError):
    """A report that cannot be read; the message names where."""


def split_nodeid(nodeid: str) -> tuple[str, str, str]:
    """(file path, group, test name without its [parameters]) of a pytest node id; the group
    is `path::Class` or, for module-level tests, `path`. The one reading of node ids.

    Parameters (`test_x[a::b/c]`) may contain `::` and `/`, so the bracket part is cut first.
    Nested classes group under the innermost class: every component but the test name.
    """
    head, sep, rest = nodeid.partition("::")
    if not sep:
        return head, head, ""
    bracket = rest.find("[")
    if bracket >= 0:
        rest = rest[:bracket]
    group, inner, test = rest.rpartition("::")
    return head, (head + "::" + group) if inner else head, test


def class_of(nodeid: str) -> str | None:
    """The innermost class of a node id, or None for a module-level test."""
    path, group, _ = split_nodeid(nodeid)
    return group.rpartition("::")[2] if group != path else None


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file, one of them relative to a folder the other names."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


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


def short_message(text: str | None) -> str | None:
    if not text:
        return None
    text = text.strip()
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


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
    return TestTiming(
        nodeid=nodeid,
        outcome=outcome,
        setup=durations[0],
        call=durations[1],
        teardown=durations[2],
        user_properties=props,
        message=message,
    )


_new, _set = object.__new__, object.__setattr__


COUNTERS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "errors"}


def class_timings(groups: dict[str, list[TestTiming]]) -> list[ClassTiming]:
    out = []
    for name, cases in groups.items():
        # `TestTiming.total` spelt out: this runs once per test of a 100,000-test report.
        total = sum([c.setup + c.call + c.teardown for c in cases])
        setup, teardown = cases[0].setup, cases[-1].teardown
        counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        complete = True
        for c in cases:
            key = COUNTERS.get(c.outcome)
            if key:
                counts[key] += 1
            elif c.outcome == "running":
                complete = False
        out.append(
            built(
                ClassTiming,
                name=name,
                class_setup=setup,
                tests=max(0.0, total - setup - teardown),
                class_teardown=teardown,
                total=total,
                complete=complete,
                test_cases=cases,
                **counts,
            )
        )
    return out


def built(cls: type[T], **values: Any) -> T:
    """A slotted dataclass from values already of its fields' types (every field given), set
    without validation: validating copies the list of test cases, thousands of times over in
    a large report. tests/test_perf_equivalence.py holds it equal to the validated path."""
    obj = _new(cls)
    for name, value in values.items():
        _set(obj, name, value)
    return obj


def crash_message(phase: dict) -> str | None:
    crash = phase.get("crash")
    if isinstance(crash, dict) and crash.get("message"):
        return short_message(str(crash["message"]))
    longrepr = phase.get("longrepr")
    if isinstance(longrepr, str) and longrepr.strip():
        return short_message(longrepr.strip().splitlines()[-1])
    return None
