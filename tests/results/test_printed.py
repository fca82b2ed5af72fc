"""TIMINGS blocks: the one written after a run, and the parser `run --from-log` reads job output
with, on synthetic logs in the real format."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from synthlogs import Ran, job_log

from ci_budget.models import FileResult
from ci_budget.results.printed import parse_log, timings_block

T0 = datetime(2026, 8, 21, 10, 0, tzinfo=timezone.utc)
SUITE = "base-b-test-1-gpu-large"
A, B, C = (f"test/registered/x/test_{n}.py" for n in "abc")


def _parse(text: str):
    return parse_log(text.splitlines())


def test_the_block_run_writes_is_the_block_from_log_reads():
    files = [
        FileResult(path=A, status="passed", elapsed=12.34),
        FileResult(path=B, status="failed", elapsed=3.0),
        FileResult(path=C, status="not-run"),
    ]
    log = "python3 run_suite.py --suite base-b-test-1-gpu-large\n" + timings_block(files)
    found = _parse(log)
    assert found.problems == [] and found.blocks == 1
    assert [(e.file, e.status, e.elapsed) for e in found.entries] == [
        (A, "passed", 12.0),  # whole seconds, as run_suite.py writes them
        (B, "failed", 3.0),
    ]


def test_block_with_timestamps_retries_and_a_timeout():
    files = [Ran(A, 655), Ran(B, 300, retried=True), Ran(C, 1800, passed=False, timed_out=True)]
    text = job_log(T0, SUITE, files, index=3, size=8)
    got = _parse(text)
    assert got.problems == [] and got.blocks == 1
    assert [(e.file, e.status, e.elapsed) for e in got.entries] == [
        (A, "passed", 655.0),
        (B, "passed", 300.0),
        (C, "timeout", 1800.0),  # passed: false plus run_suite's final TIMEOUT line
    ]
    assert text.splitlines()[got.entries[0].line - 1].endswith('"elapsed": 655}')


def test_two_blocks_keep_the_latest_entry_per_file():
    got = _parse(job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], blocks=2))
    assert got.blocks == 2 and got.problems == []
    assert [(e.file, e.elapsed) for e in got.entries] == [(A, 101.0), (B, 201.0)]


def test_truncated_log_keeps_complete_lines_and_says_so():
    got = _parse(job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], cut_in_block=True))
    assert [e.file for e in got.entries] == [A]
    messages = [p.message for p in got.problems]
    assert any("not a timing entry: not JSON" in m for m in messages)  # the half line
    assert any("not closed" in m and "kept its 1 complete entries" in m for m in messages)


def test_a_number_python_will_not_convert_is_a_problem_not_a_crash():
    # Test output is untrusted: a 5,000-digit elapsed is valid JSON that json.loads refuses
    # with a plain ValueError (int conversion limit), not a JSONDecodeError.
    huge = json.dumps({"file": B, "elapsed": 0}).replace("0}", "1" * 5000 + "}")
    got = _parse(job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], malformed=huge))
    assert [e.file for e in got.entries] == [A, B]
    (problem,) = got.problems
    assert "not a timing entry: not readable JSON (Exceeds the limit" in problem.message


def test_malformed_line_is_named_and_the_rest_kept():
    text = job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], malformed='{"file": 5, "elapsed": 1}')
    got = _parse(text)
    assert [e.file for e in got.entries] == [A, B]
    (problem,) = got.problems
    lines = text.splitlines()
    assert "::" not in problem.message.split(": ", 1)[0]
    assert problem.message.startswith("not a timing entry: 'file' is not a path")
    assert '{"file": 5' in lines[problem.line - 1]  # the line number points at it


def test_untrusted_text_is_escaped_and_bad_values_refused():
    bad = [
        '{"file": "a.py\\n::error::x", "passed": true, "elapsed": 1}',
        '{"file": "a.py", "passed": "yes", "elapsed": 1}',
        '{"file": "a.py", "passed": true, "elapsed": -1}',
        "::add-mask::secret\u2028",
    ]
    got = _parse(
        "\n".join(
            ["========== TIMINGS BEGIN ==========", *bad, "========== TIMINGS END =========="]
        )
    )
    assert got.entries == [] and len(got.problems) == 4
    assert all("\n" not in p.message and "\u2028" not in p.message for p in got.problems)


def test_no_block_and_stray_end():
    got = _parse("2026-08-21T10:00:00.0000000Z hello\n========== TIMINGS END ==========\n")
    assert got.entries == []
    assert [p.message for p in got.problems] == [
        "TIMINGS END without a BEGIN; ignored",
        "no TIMINGS block in 2 lines",
    ]
