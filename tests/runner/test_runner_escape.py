"""The escape that the process group and the environment token both miss: a grandchild started
through `sh -c "env -i python ... &"` (no token) that calls setsid() (no group), whose parent
`sh` exits at once. The runner, a child subreaper, adopts it and kills it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from ci_budget.cli import main
from ci_budget.models import RunResults
from ci_budget.runner import proctree, run
from ci_budget.runner.proctree import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc, prctl")

ESCAPE = """\
import os, shlex, subprocess, sys, time, unittest


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=2, stage="base-b", runner_config="1-gpu-large")

GRANDCHILD = (
    "import os, signal, sys, time\\n"
    "os.setsid()\\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
    "open(sys.argv[1], 'w').write(str(os.getpid()))\\n"
    "time.sleep(1000)\\n"
)


class TestEscape(unittest.TestCase):
    def test_escape(self):
        argv = ["env", "-i", sys.executable, "-c", GRANDCHILD, os.environ["PIDFILE"]]
        subprocess.run(["sh", "-c", " ".join(map(shlex.quote, argv)) + " &"], check=True)
        while not os.path.exists(os.environ["PIDFILE"]):
            time.sleep(0.05)
        if os.environ["HOW"] == "hang":
            time.sleep(1000)
"""


def _pid(path: Path) -> int:
    for _ in range(400):
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _run(tmp_path: Path, monkeypatch, how: str) -> tuple[int, RunResults, int]:
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    monkeypatch.setenv("HOW", how)
    test = tmp_path / "test" / "registered" / "test_escape.py"
    test.parent.mkdir(parents=True)
    test.write_text(ESCAPE)
    # Not needed here, and seconds of start-up and exit on a busy machine.
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:hypothesispytest\n")
    out = tmp_path / "results.json"
    limit = "10" if how == "hang" else "120"
    rc = main(["run", "--root", str(tmp_path), "--suite", "base-b-test-1-gpu-large",
               "--out", str(out), "--grace", "0.3", "--timeout-per-file", limit])  # fmt: skip
    return rc, RunResults.model_validate_json(out.read_text()), _pid(pidfile)


def _environ(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


@pytest.mark.parametrize("how", ["hang", "exit"])
def test_setsid_grandchild_without_token_is_killed(tmp_path, monkeypatch, how):
    rc, results, grandchild = _run(tmp_path, monkeypatch, how)
    assert not alive(grandchild), "the escaped grandchild survived"
    (f,) = results.files
    if how == "hang":
        assert (rc, f.status) == (1, "timeout")
    else:  # the file's tests passed; what it left behind is killed and fails the file
        assert (rc, f.status, f.exit_code) == (1, "failed", 0)
        assert "killed 1 leftover process(es)" in (f.message or "")


def test_without_the_subreaper_the_grandchild_escapes(tmp_path, monkeypatch):
    """The control: with prctl off, the same grandchild outlives the kill with PPID 1 (or the
    machine's own subreaper), carrying no token, in a session of its own."""

    @contextlib.contextmanager
    def off():
        yield False

    monkeypatch.setattr(run, "child_subreaper", off)
    rc, results, grandchild = _run(tmp_path, monkeypatch, "hang")
    try:
        assert results.files[0].status == "timeout"
        assert alive(grandchild), "expected the escape the subreaper exists for"
        assert proctree.TOKEN_VAR.encode() not in _environ(grandchild)
        assert os.getsid(grandchild) == grandchild
        assert proctree._stat(grandchild)[0] != os.getpid()
    finally:
        os.kill(grandchild, signal.SIGKILL)
