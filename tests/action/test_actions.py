from __future__ import annotations

import re

from actionrunner.runner import read_output_file

from ci_budget.github import workflow as actions


def test_outputs_are_multiline_safe_with_random_delimiters(tmp_path):
    target = tmp_path / "out"
    env = {"GITHUB_OUTPUT": str(target)}
    hostile = "line1\nEOF\nghadelimiter_x\nshould-run<<EOF\ntrue"
    assert actions.set_outputs({"reason": hostile, "should-run": False, "n": 3}, env)
    parsed = read_output_file(target)
    assert parsed == {"reason": hostile, "should-run": "false", "n": "3"}
    delimiters = re.findall(r"<<(ghadelimiter_\w+)", target.read_text())
    assert len(set(delimiters)) == 3


def test_outputs_without_runner_env_do_nothing():
    assert actions.set_outputs({"a": 1}, {}) is False


def test_summary_appends_and_respects_the_limit(tmp_path):
    target = tmp_path / "summary"
    env = {"GITHUB_STEP_SUMMARY": str(target)}
    actions.append_summary("# one\n", env)
    actions.append_summary("x" * (actions.SUMMARY_LIMIT * 2), env)
    data = target.read_bytes()
    assert data.startswith(b"# one\n")
    assert len(data) <= actions.SUMMARY_LIMIT
    assert b"1 MiB limit" in data


def test_annotation_escapes_properties_and_message():
    line = actions.annotation("warning", "50%\nover", file="a,b:c.py", line=7, title="over budget")
    assert line == "::warning file=a%2Cb%3Ac.py,line=7,title=over budget::50%25%0Aover"
    assert actions.annotation("error", "boom") == "::error::boom"
