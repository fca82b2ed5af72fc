"""Fast paths give exactly what the plain paths give.

- pytest-json-report files are decoded by a schema of the fields used (`results.json_report`);
  the plain path is `json.loads` of the whole file + `timings.file_results_from_json_report`.
- TestTimings share one fields-set; they must equal freshly validated ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.genresults import json_report
from ci_budget.models import TestTiming
from ci_budget.results.timings import file_results_from_json_report
from ci_budget.workspace.result_files import (
    ResultsError,
    _decode_chunks,
    load_json_reports,
    read_json,
)

SAMPLE = Path(__file__).parent / "fixtures" / "json_report" / "sample.json"


def whole(path: Path):
    return file_results_from_json_report(read_json(path))


def stream_json_report(path: Path):
    return _decode_chunks(path)


@pytest.mark.parametrize("indent", [None, 2])
def test_streamed_generated_report_equals_whole_file_path(tmp_path, indent):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(json_report(700, 9), indent=indent))
    streamed = stream_json_report(path)
    assert streamed is not None and len(streamed) == 9
    assert streamed == whole(path)
    assert [f.model_dump() for f in streamed] == [f.model_dump() for f in whole(path)]
    assert sum(len(c.test_cases) for f in streamed for c in f.classes) == 700


def test_streamed_real_sample_equals_whole_file_path():
    streamed = stream_json_report(SAMPLE)
    assert streamed is not None and streamed == whole(SAMPLE)
    assert any(f.status == "failed" for f in streamed)


def test_numbers_and_collector_errors_are_read_whole(tmp_path):
    data = {
        "duration": 1234567.875,
        "collectors": [{"nodeid": "t.py", "outcome": "failed", "longrepr": "E  boom"}],
        "tests": [
            {"nodeid": f"t.py::T::test_{i}", "call": {"duration": 12345.678901 + i}}
            for i in range(50)
        ],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert stream_json_report(path) == whole(path)
    [result] = stream_json_report(path)
    assert result.message == "E  boom" and result.classes[0].test_cases[3].call == 12348.678901


@pytest.mark.parametrize(
    "text",
    [
        '{"tests": [{"nodeid": "a.py::t"}], "tests": []}',  # duplicate key: last one wins
        '{"tests": [{"nodeid": "a.py::t"}]} trailing',
        '{"tests": [{"nodeid": "a.py::t"},]}',
        '\ufeff{"tests": []}',
        '{"collectors": []}',
        '{"tests": {"nodeid": "a.py::t"}}',
        '{"tests": [{"nodeid": 3}]}',
        '{"tests": [{"nodeid": "a.py::t", "call": {"duration": "slow"}}]}',
        '{"tests": [{"nodeid": "a.py::t", "call": {"duration": NaN}}]}',
        "[]",
        "",
    ],
)
def test_odd_files_give_exactly_the_whole_file_answer(tmp_path, text):
    path = tmp_path / "odd.json"
    path.write_text(text, encoding="utf-8")

    def plain():
        data = read_json(path)
        if not isinstance(data, dict) or "tests" not in data and "collectors" not in data:
            raise ResultsError(f"{path}: not a pytest-json-report file (no 'tests' key)")
        try:
            return file_results_from_json_report(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(f"{path}: cannot read pytest-json-report data: {exc}") from None

    try:
        expected, error = plain(), None
    except ResultsError as exc:
        expected, error = None, str(exc)
    if error is None:  # compared as JSON: NaN != NaN as a float
        got = load_json_reports([str(path)])[0].files
        assert [f.model_dump_json() for f in got] == [f.model_dump_json() for f in expected]
    else:
        with pytest.raises(ResultsError) as got:
            load_json_reports([str(path)])
        assert str(got.value) == error


def test_not_utf8_is_the_same_error(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"tests": [{"nodeid": "caf\xe9.py::t"}]}')
    assert stream_json_report(path) is None
    with pytest.raises(ResultsError, match="not UTF-8"):
        load_json_reports([str(path)])


def test_shared_fields_set_matches_a_validated_timing():
    [result] = [r for r in stream_json_report(SAMPLE) if r.classes]
    for case in (c for cls in result.classes for c in cls.test_cases):
        fresh = TestTiming(**case.model_dump())
        assert case == fresh
        assert case.model_fields_set == fresh.model_fields_set
        assert case.model_dump(exclude_unset=True) == fresh.model_dump(exclude_unset=True)
    case.outcome = "failed"  # assignment still works with the shared set
    assert case.model_fields_set == set(TestTiming.model_fields)
