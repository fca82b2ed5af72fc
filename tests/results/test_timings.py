import json
from pathlib import Path

import pytest
from helpers.reportlog import classes_from_reportlog

from ci_budget.models import FileResult
from ci_budget.results.phases import ReportError, class_of, normalise_properties, split_nodeid
from ci_budget.results.timings import (
    charge_in_flight,
    classes_from_json_report,
    file_results_from_json_report,
    parse_reportlog,
    unattributed,
)

FIX = Path(__file__).parents[1] / "fixtures" / "json_report"


@pytest.fixture
def report() -> dict:
    return json.loads((FIX / "sample.json").read_text())


@pytest.fixture
def log_lines() -> list[str]:
    return (FIX / "sample.jsonl").read_text().splitlines()


@pytest.mark.parametrize(
    "nodeid, expected",
    [
        ("f.py::TestA::test_x", ("f.py", "f.py::TestA", "test_x")),
        ("f.py::TestA::test_x[a::b-1]", ("f.py", "f.py::TestA", "test_x")),
        ("d/f.py::test_p[x/y::z]", ("d/f.py", "d/f.py", "test_p")),
        ("d/f.py::test_mod", ("d/f.py", "d/f.py", "test_mod")),
        (
            "d/f.py::TestOuter::TestInner::test_x[1]",
            ("d/f.py", "d/f.py::TestOuter::TestInner", "test_x"),
        ),
        ("d/f.py", ("d/f.py", "d/f.py", "")),
        ("t.py::TestKL::test_case[a::b]", ("t.py", "t.py::TestKL", "test_case")),
    ],
)
def test_split_nodeid(nodeid, expected):
    assert split_nodeid(nodeid) == expected
    cls = expected[1].rpartition("::")[2] if "::" in expected[1] else None
    assert class_of(nodeid) == cls


def test_normalise_properties_both_shapes():
    assert normalise_properties([{"a": 1}, {"b": "x"}]) == {"a": 1, "b": "x"}
    assert normalise_properties([["a", 1], ("b", 2.5)]) == {"a": 1, "b": 2.5}
    assert normalise_properties(None) == {}


def test_json_report_classes(report):
    classes = classes_from_json_report(report)
    assert [c.name for c in classes] == ["test_sample.py::TestA", "test_sample.py"]
    cls, mod = classes
    # setUpClass sleeps 0.1 s inside the first test's setup phase
    assert cls.class_setup >= 0.1
    assert cls.class_setup == cls.test_cases[0].setup
    assert cls.class_teardown == cls.test_cases[-1].teardown
    assert cls.total == pytest.approx(cls.class_setup + cls.tests + cls.class_teardown)
    assert cls.total == pytest.approx(sum(t.total for t in cls.test_cases))
    assert (cls.passed, cls.failed, cls.skipped, cls.errors) == (1, 1, 0, 0)
    assert cls.test_cases[1].message == "AssertionError: 1 != 2"
    # module level: test_mod, two params, teardown error, skip, xfail
    assert [t.nodeid.split("::", 1)[1] for t in mod.test_cases] == [
        "test_mod",
        "test_p[a::b/c]",
        "test_p[1]",
        "test_td",
        "test_skip",
        "test_xf",
    ]
    assert (mod.passed, mod.failed, mod.skipped, mod.errors) == (3, 0, 2, 1)
    assert mod.test_cases[0].user_properties == {"tok_s": 12.5}
    assert mod.test_cases[3].outcome == "error"
    assert all(c.complete for c in classes)


def test_both_parsers_agree(report, log_lines):
    from_json = classes_from_json_report(report)
    from_log = classes_from_reportlog(log_lines)
    assert from_json == from_log and from_json
    log = parse_reportlog(log_lines)
    assert log.finished and log.exitstatus == 1 and log.in_flight is None


def test_cut_reportlog_names_in_flight_and_keeps_completed(log_lines):
    # cut right after test_2's setup report: TestA::test_2 was running
    cut = next(
        i
        for i, line in enumerate(log_lines)
        if '"when": "setup"' in line and "TestA::test_2" in line
    )
    log = parse_reportlog(log_lines[: cut + 1] + ['{"nodeid": "torn'])  # torn last write
    assert not log.finished
    assert log.in_flight == "test_sample.py::TestA::test_2"
    (cls,) = log.classes()
    assert not cls.complete
    assert cls.passed == 1 and [t.outcome for t in cls.test_cases] == ["passed", "running"]


def test_start_marker_names_a_test_hung_in_setup(log_lines):
    first = [line for line in log_lines if "TestA::test_1" not in line and "TestA" not in line]
    marker = json.dumps(
        {"$report_type": "CiBudgetTestStart", "nodeid": "x.py::TestS::test_1", "start": 100.0}
    )
    log = parse_reportlog([marker, *first[:2]])
    assert log.in_flight == "x.py::TestS::test_1"
    charge_in_flight(log, until=103.5)
    (cls,) = log.classes()
    assert cls.class_setup == pytest.approx(3.5) and not cls.complete


def test_bad_reportlog_line_names_line():
    with pytest.raises(ReportError, match=r"rl:2: invalid JSON"):
        parse_reportlog(['{"$report_type": "SessionStart"}', "{nope", "{}"], source="rl")
    with pytest.raises(ReportError, match=r"rl:1: TestReport without nodeid"):
        parse_reportlog(['{"$report_type": "TestReport"}'], source="rl")


def test_lenient_reportlog_keeps_good_lines(log_lines):
    damaged = log_lines[:5] + ["{garbage", "[1, 2]"] + log_lines[5:]
    log = parse_reportlog(damaged, source="rl", strict=False)
    assert log.problems == ["rl:6: invalid JSON: Expecting property name enclosed in double quotes",
                            "rl:7: expected a JSON object"]  # fmt: skip
    assert log.classes() == classes_from_reportlog(log_lines)


def test_bad_json_report_is_clear():
    with pytest.raises(ReportError, match="missing 'tests'"):
        classes_from_json_report({})
    with pytest.raises(ReportError, match=r"tests\[1\] has no nodeid"):
        classes_from_json_report({"tests": [{"nodeid": "a.py::t"}, {}]})


def test_unattributed_clamps(report):
    classes = classes_from_json_report(report)
    total = sum(c.total for c in classes)
    assert unattributed(total + 2.0, classes) == pytest.approx(2.0)
    assert unattributed(0.0, classes) == 0.0


def test_file_results_from_json_report(report):
    report = dict(report)
    report["tests"] = report["tests"] + [
        {
            "nodeid": "other/t.py::TestB::test_ok",
            "outcome": "passed",
            "setup": {"duration": 0.5, "outcome": "passed"},
            "call": {"duration": 1.0, "outcome": "passed"},
            "teardown": {"duration": 0.25, "outcome": "passed"},
        }
    ]
    report["collectors"] = report["collectors"] + [
        {"nodeid": "broken.py", "outcome": "failed", "longrepr": "E   ImportError: nope"}
    ]
    files = {f.path: f for f in file_results_from_json_report(report)}
    assert list(files) == ["test_sample.py", "other/t.py", "broken.py"]
    assert files["test_sample.py"].status == "failed"
    assert files["other/t.py"].status == "passed"
    assert files["other/t.py"].elapsed == pytest.approx(1.75)
    assert files["broken.py"].status == "failed" and "ImportError" in files["broken.py"].message
    assert all(isinstance(f, FileResult) for f in files.values())


def test_scale_one_pass():
    n = 100_000
    tests = [
        {
            "nodeid": f"f{i % 10}.py::T{i % 1000}::test_{i}",
            "outcome": "passed",
            "setup": {"duration": 0.001, "outcome": "passed"},
            "call": {"duration": 0.002, "outcome": "passed"},
            "teardown": {"duration": 0.001, "outcome": "passed"},
        }
        for i in range(n)
    ]
    classes = classes_from_json_report({"tests": tests})
    assert len(classes) == 1000
    assert sum(c.passed for c in classes) == n
