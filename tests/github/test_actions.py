"""The Actions runner's side (github/actions.py): reading the runner environment and the event
file; and no workflow commands from data: what ci-budget prints in a job log is read here the
way the Actions runner reads it (lines end at \\n, \\r or \\r\\n; leading blanks are trimmed;
`::` starts a command, and `##[` anywhere in a line makes one (the runner's older parser
searches the line for it); `::stop-commands::TOKEN` pauses them until `::TOKEN::`), and the
only commands found are the ones ci-budget meant to write."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from actionrunner.runner import read_output_file
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_budget.github import actions
from ci_budget.github.actions import EventError, annotation, load_payload, print_report, runner_env
from ci_budget.render.escape import log_text

DATA = [
    "\r##[error]PWN fake annotation",
    "::add-mask::PWN",
    "x\n::error file=a.py::PWN",
    "  ::warning::PWN indented",
    "\r\n\t##[group]PWN",
    "::stop-commands::pwn",
    "\u2028::notice::PWN separator",
    "FAILED test_x.py - ValueError: ##[error]PWN mid-line",
]


def runner_commands(log: str) -> list[str]:
    """The workflow commands the runner would execute for this step output."""
    commands, stop_token = [], None
    for line in re.split(r"\r\n|\r|\n", log):
        text = line.lstrip()  # .NET TrimStart: whitespace only (not U+200B)
        if stop_token is not None:
            if text == f"::{stop_token}::":
                stop_token = None
            continue
        if text.startswith("::stop-commands::"):
            stop_token = text[len("::stop-commands::") :]
        if text.startswith("::") or "##[" in text:
            commands.append(text)
    return commands


def unescape(value: str, prop: bool) -> str:
    """The runner's unescaping of command data (and, for properties, `:` and `,`)."""
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for code, char in pairs + [("%25", "%")]:
        value = value.replace(code, char)
    return value


@pytest.mark.parametrize("text", DATA)
def test_log_text_leaves_no_command(text):
    original = f"report line\n{text}\nlast line"
    safe = log_text(original)
    assert runner_commands(original) != []  # each would be a command as it is
    assert runner_commands(safe) == []
    assert safe.replace("\u200b", "") == re.sub(r"\r\n|\r", "\n", original)  # same text


def test_print_report_fences_the_report_in_actions():
    out = io.StringIO()
    print_report("\n".join(DATA), out, fence=True)
    lines = out.getvalue().splitlines()
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0]).group(1)
    assert lines[-1] == f"::{token}::" and out.getvalue().count(token) == 2
    assert runner_commands(out.getvalue()) == [lines[0]]  # the fence only
    # outside Actions nothing is added, and the lines are still defused
    out = io.StringIO()
    print_report("\n".join(DATA), out, fence=False)
    assert not out.getvalue().startswith("::stop-commands::")
    assert runner_commands(out.getvalue()) == []


@pytest.mark.parametrize("text", DATA + ["50% of 1,2: a::b"])
def test_annotation_round_trips_through_the_runner(text):
    command = annotation("warning", text, file=f"t/{text}.py", line=3, title=text)
    assert runner_commands(command) == [command]  # one line, one command
    head, data = command[2:].split("::", 1)
    level, props = head.split(" ", 1)
    fields = dict(p.split("=", 1) for p in props.split(","))
    assert level == "warning"
    assert unescape(data, prop=False) == text
    assert unescape(fields["file"], prop=True) == f"t/{text}.py"
    assert unescape(fields["title"], prop=True) == text
    assert fields["line"] == "3"


SUITE = "base-b-test-1-gpu-large"
TEST_FILE = 'register_cuda_ci(est_time=10, stage="base-b", runner_config="1-gpu-large")\n'


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", None])
def test_report_in_actions_runs_only_its_own_commands(tmp_path: Path, fmt):
    tests = tmp_path / "test" / "registered"
    tests.mkdir(parents=True)
    files = []
    for i, text in enumerate(DATA):
        (tests / f"t{i}.py").write_text(TEST_FILE)
        files.append(
            {
                "path": f"test/registered/t{i}.py",
                "elapsed": 30.0,
                "status": ["failed", "timeout", "passed"][i % 3],
                "timeout": 30.0,
                "message": text,
                "in_flight": text,
                "classes": [{"name": text, "total": 20.0}],
            }
        )
    files.append({"path": DATA[0], "elapsed": 5.0, "status": "passed"})  # not registered
    meta = {"suites": [SUITE], "runner_config": DATA[1], "gpu": {"name": DATA[3], "count": 1}}
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"schema_version": 1, "meta": meta, "files": files}))
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("GITHUB_")}
    env["GITHUB_ACTIONS"] = "true"
    args = ["--format", fmt] if fmt else []
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(tmp_path)]
        + ["--results", str(results), *args],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    commands = runner_commands(proc.stdout) + runner_commands(proc.stderr)
    fences = [c for c in commands if c.startswith("::stop-commands::")]
    assert len(fences) == (1 if fmt in ("text", "markdown") else 0)
    commands = [c for c in commands if c not in fences]
    assert commands, proc.stdout  # the annotations of the over/timed-out files
    assert all(re.match(r"::(warning|error) file=test/registered/t\d\.py,", c) for c in commands)
    assert not any("PWN" in c or "add-mask" in c for c in commands)


def test_scan_prints_suite_names_as_data(tmp_path: Path):
    tests = tmp_path / "test" / "registered"
    tests.mkdir(parents=True)
    suites = ["::add-mask::PWN", "\\r##[error]PWN", "::stop-commands::pwn"]
    for i, suite in enumerate(suites):
        (tests / f"t{i}.py").write_text(f'register_cuda_ci(est_time=5, suite="{suite}")\n')
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("GITHUB_")}
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env=env | {"GITHUB_ACTIONS": "true"},
        timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "add-mask::PWN" in proc.stdout  # listed, as text
    assert runner_commands(proc.stdout) == [] and runner_commands(proc.stderr) == []


HOSTILE_OUTPUT = """\
import sys


def register_cuda_ci(**kw):
    return None


register_cuda_ci(est_time=10, stage="base-b", runner_config="1-gpu-large")


def test_loud():  # pytest shows a failing test's output, each printed line at a line start
    print("::add-mask::PWN")
    print("  ::error::PWN")
    sys.stdout.write("ok\\r##[error]PWN\\n")
    raise AssertionError("loud")
"""


def test_a_test_files_output_reaches_the_job_log_as_text(tmp_path: Path):
    # The run step streams each file's output (PR code) into the job log: defused there, kept
    # as printed in the artifact log.
    tests = tmp_path / "test" / "registered"
    tests.mkdir(parents=True)
    (tests / "test_loud.py").write_text(HOSTILE_OUTPUT)
    tmp_path.chmod(0o755)  # as actions/checkout leaves it: a root runner's sandboxed tests read it
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("GITHUB_")}
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(tmp_path), "--suite", SUITE,
         "--out", str(tmp_path / "r.json"), "--python", sys.executable,
         "--artifacts-dir", str(tmp_path / "r-artifacts")],
        capture_output=True, text=True, cwd=tmp_path, env=env | {"GITHUB_ACTIONS": "true"},
        timeout=300, check=False,
    )  # fmt: skip
    shown = proc.stdout.replace("\u200b", "")
    assert "add-mask::PWN" in shown and "##[error]PWN" in shown, proc.stdout
    assert runner_commands(proc.stdout) == [] and runner_commands(proc.stderr) == []
    [log] = (tmp_path / "r-artifacts").glob("*test_loud.log")
    assert "\n::add-mask::PWN\n" in "\n" + log.read_text()


def test_log_text_shows_bidi_and_invisible_code_points():
    line = "FAILED test_\u202eyp.x - admin\u200b\u2066 ok\ufeff\U000e0041"
    assert log_text(line) == "FAILED test_<U+202E>yp.x - admin<U+200B><U+2066> ok<U+FEFF><U+E0041>"
    assert log_text("caf\u00e9 \u2014 \u4e2d") == "caf\u00e9 \u2014 \u4e2d"  # letters stay


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["::", "##[", " ", "\t", "\n", "\r", "\u2028", "x", "error"])))
def test_log_text_defuses_any_mix_of_line_ends(pieces):
    """With and without a `\\r` (the two ways lines are cut), nothing reads as a command."""
    original = "".join(pieces)
    safe = log_text(original)
    assert runner_commands(safe) == []
    assert safe.replace("\u200b", "") == re.sub(r"\r\n|\r", "\n", original)


# --- the runner environment and the event file --------------------------------------------------


def test_runner_env_defaults_and_token_kept_out_of_repr():
    env = runner_env({"GITHUB_TOKEN": "ghs_secret", "GITHUB_API_URL": "http://127.0.0.1:1/"})
    assert env.api_url == "http://127.0.0.1:1" and env.server_url == "https://github.com"
    assert env.token == "ghs_secret" and "ghs_secret" not in repr(env)
    assert env.event_name is None and env.run_url is None
    env = runner_env({"GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "5", "GITHUB_EVENT_NAME": ""})
    assert env.run_url == "https://github.com/o/r/actions/runs/5" and env.event_name is None


def test_payload_errors_name_the_event_and_the_file(tmp_path):
    with pytest.raises(EventError, match="^push: GITHUB_EVENT_PATH is not set$"):
        load_payload("push", None)
    with pytest.raises(EventError, match=f"^push: cannot read {tmp_path}/none.json: "):
        load_payload("push", str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{")
    with pytest.raises(EventError, match=f"^push: {bad} is not JSON: "):
        load_payload("push", str(bad))
    bad.write_text('"text"')
    with pytest.raises(EventError, match="holds a JSON str, not an object"):
        load_payload("push", str(bad))
    bad.write_text('{"action": "opened"}')
    assert load_payload("push", str(bad)) == {"action": "opened"}


# --- outputs and the step summary, as the runner reads them -------------------------------------


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
