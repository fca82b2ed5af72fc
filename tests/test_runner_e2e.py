"""`ci-budget run` end to end: real repos in tmp_path, real pytest processes, real kills."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from ci_budget.cli import main
from ci_budget.models import RunResults
from ci_budget.runner.proctree import alive
from ci_budget.runner.run import prepare_plugin_dir

SUITE = "base-b-test-1-gpu-large"
SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "results.schema.json"

HEADER = """\
import os, subprocess, sys, time, unittest

import pytest


def register_cuda_ci(**kwargs):  # stands in for sglang's ci_register
    pass


register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")
"""
MAIN = '\n\nif __name__ == "__main__":\n    unittest.main()\n'

TIMED = """
class TestServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        time.sleep(0.3)  # e.g. launching a server

    def test_one(self):
        pass

    def test_two(self):
        pass


def test_module_level(record_property):
    record_property("tok_per_s", 123.5)


@pytest.mark.parametrize("x", ["a::b/c", 2])
def test_param(x):
    pass
"""

# The grandchild leaves the process group (setsid), ignores SIGTERM and sleeps forever.
HANG = """
class TestDone(unittest.TestCase):
    def test_ok(self):
        pass


class TestHang(unittest.TestCase):
    def test_hang(self):
        code = (
            "import os, signal, sys, time\\n"
            "os.setsid()\\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
            "open(sys.argv[1], 'w').write(str(os.getpid()))\\n"
            "time.sleep(1000)\\n"
        )
        subprocess.Popen([sys.executable, "-c", code, os.environ["PIDFILE"]])
        time.sleep(1000)
"""

CRASH = """
class TestFirst(unittest.TestCase):
    def test_ok(self):
        pass


class TestDies(unittest.TestCase):  # unittest runs methods in name order
    def test_a_ok(self):
        pass

    def test_b_exit(self):
        os._exit(3)
"""

FAIL = """
class TestBad(unittest.TestCase):
    def test_bad(self):
        self.assertEqual(1, 2)
"""

EMPTY = "\n# registered, but no tests\n"

# Script mode: a daemon left behind after a passing run must be cleaned up too.
SCRIPT = """
class TestScript(unittest.TestCase):
    def test_ok(self):
        code = (
            "import os, sys, time\\n"
            "os.setsid()\\n"
            "open(sys.argv[1], 'w').write(str(os.getpid()))\\n"
            "time.sleep(1000)\\n"
        )
        subprocess.Popen([sys.executable, "-c", code, os.environ["PIDFILE"]],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.environ["PIDFILE"] + ".cwd", "w") as fh:
            fh.write(os.getcwd())
"""


def make_repo(root: Path, files: dict[str, tuple[float, str]]) -> Path:
    for name, (est, body) in files.items():
        path = root / "test" / "registered" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER.format(est=est) + body + MAIN)
    return root


def run_cli(root: Path, *args: str) -> tuple[int, RunResults, str]:
    out = root / "out" / "results.json"
    rc = main(["run", "--root", str(root), "--out", str(out), "--grace", "0.3", *args])
    results = RunResults.model_validate_json(out.read_text())
    jsonschema.validate(json.loads(out.read_text()), json.loads(SCHEMA.read_text()))
    return rc, results, out


def wait_for_file(path: Path) -> str:
    deadline = time.monotonic() + 60  # a loaded machine can take many seconds to start pytest
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def test_per_class_timings_and_outputs(tmp_path, capsys):
    root = make_repo(tmp_path, {"test_timed.py": (30, TIMED)})
    artifacts = tmp_path / "raw"
    rc, results, out = run_cli(root, "--suite", SUITE, "--artifacts-dir", str(artifacts))
    text = capsys.readouterr().out
    assert "generated report log file" not in text  # pytest-reportlog's line about our file
    assert rc == 0
    (f,) = results.files
    assert f.status == "passed" and f.exit_code == 0 and f.timeout == 1200
    names = [c.name for c in f.classes]
    assert names == ["test/registered/test_timed.py::TestServer", "test/registered/test_timed.py"]
    server, module = f.classes
    assert server.class_setup >= 0.3 and server.passed == 2
    assert server.total == pytest.approx(server.class_setup + server.tests + server.class_teardown)
    assert module.passed == 3
    assert module.test_cases[0].user_properties == {"tok_per_s": 123.5}
    assert [t.nodeid.split("::", 1)[1] for t in module.test_cases[1:]] == [
        "test_param[a::b/c]",
        "test_param[2]",
    ]
    assert f.unattributed == pytest.approx(f.elapsed - server.total - module.total)
    # run_suite.py's per-commit default, not the est-time rule
    assert "[1/1] START test/registered/test_timed.py (est 30s, timeout 1200s)" in text
    assert "[1/1] PASSED test/registered/test_timed.py " in text
    block = text[text.index("========== TIMINGS BEGIN ==========") :].splitlines()
    assert block[0] == "========== TIMINGS BEGIN =========="
    assert json.loads(block[1]) == {
        "file": "test/registered/test_timed.py",
        "passed": True,
        "elapsed": round(f.elapsed),  # whole seconds, as run_suite.py
    }
    assert block[2] == "========== TIMINGS END =========="
    meta = results.meta
    assert meta.suites == [SUITE] and meta.runner_config == "1-gpu-large"
    assert meta.configured_arch == "sm90" and meta.mode == "pytest"
    assert meta.started_at <= meta.finished_at
    assert (artifacts / "test__registered__test_timed.json").is_file()
    assert (artifacts / "test__registered__test_timed.jsonl").is_file()
    assert "passed" in (artifacts / "test__registered__test_timed.log").read_text()


def test_timeout_kills_setsid_grandchild(tmp_path, monkeypatch, capsys):
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    root = make_repo(tmp_path, {"test_hang.py": (2, HANG)})
    rc, results, _ = run_cli(root, "--suite", SUITE, "--timeout-per-file", "3")
    grandchild = int(wait_for_file(pidfile))
    assert not alive(grandchild), "a process of the timed-out file survived"
    assert rc == 1
    (f,) = results.files
    assert f.status == "timeout" and f.timeout == 3
    assert f.elapsed >= 3
    assert f.in_flight == "test/registered/test_hang.py::TestHang::test_hang"
    done, hang = f.classes
    assert done.name.endswith("::TestDone") and done.complete and done.passed == 1
    assert hang.name.endswith("::TestHang") and not hang.complete
    assert hang.total > 0  # time up to the kill is charged to the hanging class
    assert "TIMEOUT test/registered/test_hang.py" in capsys.readouterr().out


def test_crash_mid_class_then_fail_fast_by_default(tmp_path, capsys):
    root = make_repo(tmp_path, {"test_crash.py": (50, CRASH), "test_later.py": (10, TIMED)})
    # one shard of one: longest first, so the crash comes first whatever the directory order
    rc, results, _ = run_cli(root, "--suite", SUITE, "--partition", "0/1")
    assert rc == 1
    crash, later = results.files
    assert crash.status == "crashed" and crash.exit_code == 3
    assert crash.in_flight == "test/registered/test_crash.py::TestDies::test_b_exit"
    first, dies = crash.classes
    assert first.complete and first.passed == 1
    assert not dies.complete and dies.passed == 1
    assert later.status == "not-run" and "--continue-on-error" in later.message
    text = capsys.readouterr().out
    assert '"file": "test/registered/test_later.py"' not in text


def test_failed_and_empty_files_continue_on_error(tmp_path):
    root = make_repo(tmp_path, {"test_fail.py": (20, FAIL), "test_empty.py": (10, EMPTY)})
    rc, results, _ = run_cli(root, "--suite", SUITE, "--partition", "0/1", "--continue-on-error")
    assert rc == 1
    fail, empty = results.files
    assert fail.status == "failed" and fail.classes[0].failed == 1
    assert empty.status == "failed" and empty.exit_code == 5
    assert "no tests collected" in empty.message


def test_script_mode_and_leftover_cleanup(tmp_path, monkeypatch):
    pidfile = tmp_path / "daemon.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    root = make_repo(tmp_path, {"test_script.py": (10, SCRIPT)})
    rc, results, _ = run_cli(root, "--suite", SUITE, "--mode", "script")
    assert rc == 1  # a file that leaves a daemon running fails: it holds what the next one needs
    (f,) = results.files
    assert f.status == "failed" and f.classes == [] and f.exit_code == 0
    assert "killed 1 leftover process(es)" in f.message
    assert not alive(int(wait_for_file(pidfile)))
    # sglang runs `python3 registered/x.py -f` from test/
    assert Path(wait_for_file(Path(str(pidfile) + ".cwd"))) == (root / "test").resolve()


def test_spec_selection_runs_one_test(tmp_path):
    root = make_repo(tmp_path, {"test_timed.py": (30, TIMED)})
    rc, results, _ = run_cli(root, "test/registered/test_timed.py::TestServer.test_two")
    assert rc == 0
    (f,) = results.files
    assert f.selection == ["::TestServer::test_two"]
    (cls,) = f.classes
    assert [t.nodeid for t in cls.test_cases] == [
        "test/registered/test_timed.py::TestServer::test_two"
    ]


def test_plugins_found_by_a_python_without_them(tmp_path, monkeypatch):
    """The tests' python is a bare venv: pytest is importable, the report plugins are not."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pytest_only = prepare_plugin_dir(
        tmp_path / "pytest-only", ["pytest", "pluggy", "iniconfig", "packaging", "pygments"]
    )
    monkeypatch.setenv("PYTHONPATH", str(pytest_only))
    probe = subprocess.run(
        [str(python), "-c", "import pytest; import pytest_jsonreport"], capture_output=True
    )
    assert b"No module named 'pytest_jsonreport'" in probe.stderr
    root = make_repo(tmp_path / "repo", {"test_timed.py": (30, TIMED)})
    rc, results, _ = run_cli(root, "--suite", SUITE, "--python", str(python))
    assert rc == 0, results.files[0].message
    assert [c.passed for c in results.files[0].classes] == [2, 3]
    assert results.meta.python == str(python)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--suite", "nope"], "unknown suite 'nope'"),
        (["test/registered/missing.py"], "no such file"),
        (["--suite", SUITE, "--partition", "2/2"], "need 0 <= i < n"),
        (["::TestA"], "expected path"),
        ([], "nothing selected"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, args, message):
    root = make_repo(tmp_path, {"test_timed.py": (30, TIMED)})
    assert main(["run", "--root", str(root), *args]) == 2
    assert message in capsys.readouterr().err


def test_help_has_example(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "ci-budget run --suite" in capsys.readouterr().out


def test_results_written_after_each_file_and_sigterm_cleans_up(tmp_path, monkeypatch):
    """Numbers are on disk after each file; a cancelled job (SIGTERM to ci-budget) still kills
    the running file's processes and records what that file had finished."""
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    root = make_repo(tmp_path, {"test_timed.py": (90, TIMED), "test_hang.py": (2, HANG)})
    out = tmp_path / "res.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), "--suite", SUITE,
         "--out", str(out), "--grace", "0.3"],
        stdout=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        grandchild = int(wait_for_file(pidfile))  # the second file is running
        first = RunResults.model_validate_json(out.read_text())
        assert [f.status for f in first.files] == ["passed"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not alive(grandchild)
    timed, hang = RunResults.model_validate_json(out.read_text()).files
    assert timed.status == "passed"
    assert hang.status == "cancelled" and hang.message.startswith("cancelled after")
    assert hang.message.endswith("(SIGTERM)")
    assert hang.in_flight == "test/registered/test_hang.py::TestHang::test_hang"
    assert hang.classes[0].complete and hang.classes[0].passed == 1
