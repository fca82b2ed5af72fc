"""`report --format text --classes all|flagged|none`: whose per-class breakdown is shown."""

from __future__ import annotations

import pytest
from helpers.registry import reg

from ci_budget.budget.status import build_report
from ci_budget.config import Config
from ci_budget.models import ClassTiming, FileResult, RunMeta, RunResults
from ci_budget.render.text import terminal

SUITE = "base-b-test-1-gpu-large"


def _result(path: str, elapsed: float) -> FileResult:
    cls = ClassTiming(
        name=f"{path}::TestHeavy", class_setup=1.0, tests=elapsed - 2, total=elapsed - 1
    )
    return FileResult(
        path=path, suite=SUITE, elapsed=elapsed, status="passed", classes=[cls], unattributed=1.0
    )


REPORT = build_report(
    [reg("t/ok.py", 100), reg("t/over.py", 10)],
    [
        RunResults(
            meta=RunMeta(suites=[SUITE]), files=[_result("t/ok.py", 70), _result("t/over.py", 20)]
        )
    ],
    Config(),
)


@pytest.mark.parametrize(
    ("classes", "shown"),
    [("all", {"t/ok.py", "t/over.py"}), ("flagged", {"t/over.py"}), ("none", set())],
)
def test_classes_option(classes, shown):
    text = terminal(REPORT, classes)
    assert {p for p in ("t/ok.py", "t/over.py") if f"{p}::TestHeavy" in text} == shown
    assert "t/over.py (base-b-test-1-gpu-large): over" in text  # flagged files keep their header
    assert ("t/ok.py (base-b-test-1-gpu-large): ok" in text) == (classes == "all")


def test_default_shows_the_ok_files_breakdown_too():
    assert "t/ok.py::TestHeavy" in terminal(REPORT)
