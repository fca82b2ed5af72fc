"""Live progress: redrawn in place on a terminal, plain lines (as before) anywhere else."""

from __future__ import annotations

import io
from pathlib import Path

from ci_budget.cli import main
from ci_budget.runner import command, run

TEST = """\
import time, unittest


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=1, stage="base-b", runner_config="1-gpu-large")


class TestSlow(unittest.TestCase):
    def test_waits(self):
        time.sleep(3)  # several redraws, even on a busy machine

    def test_fails(self):
        self.assertEqual("printed on failure", "x")
"""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _repo(tmp_path: Path) -> Path:
    path = tmp_path / "test" / "registered" / "test_slow.py"
    path.parent.mkdir(parents=True)
    path.write_text(TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:hypothesispytest\n")
    return tmp_path


def _run(tmp_path, monkeypatch, stream) -> str:
    real = run.RunSetup

    def with_stream(*args, **kwargs):
        return real(*args, **{**kwargs, "stream": stream})

    monkeypatch.setattr(run, "RunSetup", with_stream)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "200")  # a wide screen: the line is never cut, however slow
    root = _repo(tmp_path)
    main(["run", "--root", str(root), "--suite", "base-b-test-1-gpu-large",
          "--out", str(tmp_path / "r.json")])  # fmt: skip
    return stream.getvalue()


def test_terminal_gets_a_live_line_and_the_failure_tail(tmp_path, monkeypatch):
    text = _run(tmp_path, monkeypatch, Terminal())
    frames = [f for f in text.split("\r\033[K") if "/ 1s (" in f]
    assert frames, text
    assert any("OVER" in f and "test/registered/test_slow.py" in f for f in frames), frames
    assert any("· test_waits" in f for f in frames), frames  # the test that is running
    assert "[1/1] FAILED test/registered/test_slow.py" in text
    assert "printed on failure" in text  # the log's tail, since the output was not shown live
    assert "(full output: " in text


def test_ci_output_stays_plain_lines(tmp_path, monkeypatch):
    text = _run(tmp_path, monkeypatch, io.StringIO())
    assert "\r" not in text and "\033" not in text
    assert "[1/1] START test/registered/test_slow.py" in text
    assert "printed on failure" in text  # pytest's own output, streamed as it came


def test_line_fits_the_width():
    text = command.line("[2/9]", "test/registered/a/" + "x" * 200 + ".py", 30, 20, "", width=80)
    assert len(text) == 79 and "150%" in text and "OVER" in text


def test_line_names_the_running_test_by_its_function():
    """Parameters may hold `::`: the live line names the test function, not a piece of them."""
    text = command.line("[1/2]", "t.py", 3, 20, "t.py::TestKL::test_case[a::b]", width=200)
    assert text.endswith("  t.py · test_case")
    assert command.line("[1/2]", "t.py", 3, 20, "t.py::test_mod", width=200).endswith("· test_mod")
    assert "·" not in command.line("[1/2]", "t.py", 3, 20, "", width=200)
