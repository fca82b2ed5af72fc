"""The tests' sandbox against the escapes of issue #23, as real processes in a stood-in runner.

The stand-in: a runner install directory whose `bin/Runner.Worker` (a copy of bash) starts
`ci-budget run` with a job's step environment (runtime and OIDC tokens, INPUT_*, the file
commands), its work directory (`_temp` with the file commands, `_actions` with a downloaded
action, `_tool` with ci-budget's cached venv, the checkout) and a $HOME with a key in it. The
registered test files are the attacker; each knows every path exactly (the best guess a PR
author can make) and prints what it reached. The same files with `--sandbox off` are the
control: there they reach all of it, which is what the sandbox is for.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers.sandbox import as_user, sandbox_or_skip

from ci_budget.models import RunResults

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")
ROOT = Path(__file__).resolve().parents[2]
SUITE = "base-b-test-1-gpu-large"
FILES = [f"test/registered/test_{name}.py" for name in ("a_read", "b_write", "c_kill", "d_forks")]
HEADER = """\
import glob, json, os, signal, subprocess, sys, time
def register_cuda_ci(**kwargs):
    pass
register_cuda_ci(est_time=30, stage="base-b", runner_config="1-gpu-large")
P = json.loads(PATHS_JSON)
"""

READ = (
    HEADER
    + """
def test_read_what_the_runner_has():
    seen = []
    for path in glob.glob("/proc/[0-9]*"):
        try:
            environ = open(path + "/environ", "rb").read()
            cmdline = open(path + "/cmdline", "rb").read()
        except OSError:
            continue
        seen.append(path)
        for name, secret in P["secrets"].items():
            if secret.encode() in environ + cmdline:
                print("FOUND", name, "in", path + "/environ")
        if b"ci_budget.cli" in cmdline or b"Runner.Worker" in cmdline:
            print("FOUND process", cmdline.replace(b"\\0", b" ").decode())
    print("SCANNED", len(seen), "processes")
    print("UID", os.getuid(), "MAP", " ".join(open("/proc/self/uid_map").read().split()))
    for name in ("GITHUB_ENV", "GITHUB_OUTPUT", "ACTIONS_RUNTIME_TOKEN", "INPUT_TOKEN"):
        if os.environ.get(name):
            print("FOUND", name, "in the environment")
    for name in ("credentials", "ssh_key"):
        try:
            if P["secrets"][name] in open(P[name]).read():
                print("FOUND", name, "at", P[name])
        except OSError as exc:
            print("refused", name, exc.strerror)
"""
)

WRITE = (
    HEADER
    + """
def _try(what, path, text):
    try:
        with open(path, "a") as fh:
            fh.write(text)
        print("WROTE", what)
    except OSError as exc:
        print("refused", what, exc.strerror)

def test_write_where_the_runner_reads():
    try:  # where ci-budget writes the next file's report: a link to the runner's credentials
        os.symlink(P["credentials"], P["next_report"])
        print("WROTE artifacts link")
    except OSError as exc:
        print("refused artifacts link", exc.strerror)
    _try("results", P["results"], "{}")
    _try("GITHUB_ENV", P["github_env"], "LD_PRELOAD=/tmp/evil.so\\n")
    _try("GITHUB_OUTPUT", P["github_output"], "results-path=/etc/passwd\\n")
    _try("_actions", P["action"], "\\nrequire('child_process').execSync('id');\\n")
    _try("venv .pth", P["venv_pth"], "import os; os.system('id')\\n")
    _try(".git hook", P["git_hook"], "#!/bin/sh\\nid\\n")
"""
)

KILL = (
    HEADER
    + """
def test_kill_ci_budget():
    marker = P["marker"] + "-survivor"
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker],
                     start_new_session=True)
    targets = {os.getppid()}
    for path in glob.glob("/proc/[0-9]*"):
        try:
            if b"ci_budget.cli" in open(path + "/cmdline", "rb").read():
                targets.add(int(path.split("/")[2]))
        except OSError:
            pass
    for pid in sorted(targets):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError as exc:
            print("refused kill", pid, exc.strerror)
    time.sleep(0.5)
    for pid in sorted(targets):
        print("KILLED" if not os.path.exists(f"/proc/{pid}") else "SURVIVED", pid)
"""
)

FORKS = (
    HEADER
    + """
CHAIN = '''
import os, sys, time
while True:
    if os.fork():
        os._exit(0)
    time.sleep(0.003)
'''

def test_fork_and_exit_every_few_ms():
    subprocess.Popen([sys.executable, "-c", CHAIN, P["marker"] + "-chain"])
    time.sleep(0.5)
"""
)


def _marked(marker: str) -> list[int]:
    """Live processes (outside any sandbox: this test sees them all) whose argv holds marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


class Runner:
    """A self-hosted runner as it lies on disk, and a job's step environment."""

    def __init__(self, base: Path):
        self.marker = f"ci-budget-escape-{uuid.uuid4().hex[:12]}"
        self.root = base / "actions-runner"
        work = self.root / "_work"
        self.temp, self.tool = work / "_temp", work / "_tool"
        self.checkout = work / "hello-gpu" / "hello-gpu"
        self.home = base / "home"
        # Where a workflow that checks out at the workspace root keeps them: in the checkout
        # (the raw reports only when asked: `run` keeps them in a temporary folder by default).
        self.out = self.checkout / "ci-budget-results.json"
        self.artifacts = self.checkout / "ci-budget-results-artifacts"
        commands = self.temp / "_runner_file_commands"
        self.github_env = commands / f"set_env_{uuid.uuid4()}"
        self.github_output = commands / f"set_output_{uuid.uuid4()}"
        self.action = work / "_actions" / "actions" / "upload-artifact" / "v4" / "dist" / "index.js"
        self.venv = self.tool / "ci-budget" / "run-0123456789abcdef-py3.11-x86_64"
        site = self.venv / "lib" / "python3.11" / "site-packages"
        self.secrets = {k: f"{self.marker}-{k}" for k in (
            "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "INPUT_TOKEN",
            "credentials", "ssh_key")}  # fmt: skip
        for folder in (commands, self.action.parent, site, self.checkout / "test" / "registered",
                       self.root / "bin", self.home / ".ssh"):  # fmt: skip
            folder.mkdir(parents=True)
        for path in (self.github_env, self.github_output):
            path.write_text("")
        self.action.write_text("module.exports = 1;\n")
        (self.root / ".credentials").write_text(self.secrets["credentials"])
        (self.home / ".ssh" / "id_rsa").write_text(self.secrets["ssh_key"])
        shutil.copy2("/bin/bash", self.root / "bin" / "Runner.Worker")
        subprocess.run(["git", "init", "-q", str(self.checkout)], check=True)
        paths = {
            "secrets": self.secrets, "marker": self.marker,
            "github_env": str(self.github_env), "github_output": str(self.github_output),
            "action": str(self.action), "venv_pth": str(site / "zz_planted.pth"),
            "git_hook": str(self.checkout / ".git" / "hooks" / "post-checkout"),
            "credentials": str(self.root / ".credentials"),
            "ssh_key": str(self.home / ".ssh" / "id_rsa"),
            "results": str(self.out),
            "next_report": str(self.artifacts / "test__registered__test_c_kill.json"),
        }  # fmt: skip
        header = json.dumps(paths)
        for name, body in {"test_a_read.py": READ, "test_b_write.py": WRITE,
                           "test_c_kill.py": KILL, "test_d_forks.py": FORKS}.items():  # fmt: skip
            (self.checkout / "test" / "registered" / name).write_text(
                body.replace("PATHS_JSON", repr(header))
            )
        (self.checkout / "pytest.ini").write_text("[pytest]\naddopts = -s -p no:hypothesispytest\n")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
        return env | {
            "GITHUB_ACTIONS": "true", "HOME": str(self.home),
            "RUNNER_TEMP": str(self.temp), "RUNNER_TOOL_CACHE": str(self.tool),
            "RUNNER_WORKSPACE": str(self.checkout.parent), "GITHUB_WORKSPACE": str(self.checkout),
            "GITHUB_ENV": str(self.github_env), "GITHUB_OUTPUT": str(self.github_output),
            "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/",
            **{k: v for k, v in self.secrets.items() if k.isupper()},
        }  # fmt: skip

    def run(self, *args: str, user: list[str] = ()) -> subprocess.CompletedProcess:
        """`ci-budget run` started the way a job step starts it: by Runner.Worker's child. The
        files are named so that they run in this order whatever order the file system lists."""
        cli = [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(self.checkout),
               "--suite", SUITE, "--out", str(self.out), "--grace", "0.5",
               "--artifacts-dir", str(self.artifacts),  # in the checkout: the worst case
               "--continue-on-error", *args, *FILES]  # fmt: skip
        worker = [str(self.root / "bin" / "Runner.Worker"), "-c", '"$@"; exit $?', "step"]
        return subprocess.run([*user, *worker, *cli], env=self.env(), capture_output=True,
                              text=True, timeout=300, cwd=self.checkout)  # fmt: skip

    def log(self, name: str) -> str:
        return (self.artifacts / f"test__registered__{name}.log").read_text(errors="replace")

    def untouched(self) -> dict[str, bool]:
        return {
            "GITHUB_ENV": self.github_env.read_text() == "",
            "GITHUB_OUTPUT": self.github_output.read_text() == "",
            "_actions": self.action.read_text() == "module.exports = 1;\n",
            "venv .pth": not any(self.venv.rglob("*.pth")),
            ".git hook": not (self.checkout / ".git" / "hooks" / "post-checkout").exists(),
            "credentials": (self.root / ".credentials").read_text() == self.secrets["credentials"],
        }

    def kill_leftovers(self) -> None:
        for pid in _marked(self.marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def runner(tmp_path):
    stand_in = Runner(tmp_path)
    yield stand_in
    stand_in.kill_leftovers()


def _results(runner: Runner) -> dict[str, RunResults]:
    results = RunResults.model_validate_json(runner.out.read_text())
    return {Path(f.path).stem: f for f in results.files}


def _contained(runner: Runner, done: subprocess.CompletedProcess) -> None:
    files = _results(runner)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(files) == ["test_a_read", "test_b_write", "test_c_kill", "test_d_forks"]
    read = runner.log("test_a_read")
    assert "SCANNED" in read and "FOUND" not in read, read
    assert "refused credentials" in read and "refused ssh_key" in read
    write = runner.log("test_b_write")
    assert "WROTE" not in write and write.count("refused") == 7, write
    assert all(runner.untouched().values()), runner.untouched()
    # ci-budget was not killed: its parent is the sandbox's init, which ignores the signal,
    # and no process outside the sandbox is there to be found.
    kill = runner.log("test_c_kill")
    assert "KILLED" not in kill and "SURVIVED 1" in kill, kill
    assert files["test_a_read"].status == files["test_b_write"].status == "passed"
    for name in ("test_c_kill", "test_d_forks"):  # the tests passed; what they left had to go
        f = files[name]
        assert (f.status, f.exit_code) == ("failed", 0), (name, f.message)
        assert "leftover process(es) after the file ended" in f.message
    assert _marked(runner.marker) == []  # the survivor and the fork chain are gone


def test_every_escape_is_contained(runner):
    sandbox_or_skip()
    _contained(runner, runner.run("--sandbox", "on"))
    if os.geteuid() == 0:  # a root runner: the tests run as root, without capabilities
        assert "UID 0 MAP 0 0 4294967295" in runner.log("test_a_read")


@pytest.mark.slow
def test_every_escape_is_contained_on_a_runner_that_is_not_root(runner, tmp_path):
    """The same with ci-budget itself unprivileged (uid 65534): the sandbox is a user namespace."""
    sandbox_or_skip()
    if os.geteuid() != 0:
        user: list[str] = []  # this machine's runner user is already not root
    else:
        user = as_user(65534, tmp_path, {str(ROOT)})
    _contained(runner, runner.run("--sandbox", "on", user=user))
    # A user namespace of one uid: the runner's own, without capabilities.
    assert f"UID {os.geteuid() or 65534} MAP {os.geteuid() or 65534} " in runner.log("test_a_read")


@pytest.mark.slow
def test_without_the_sandbox_the_same_tests_reach_everything(runner):
    """The control: each escape is real. ci-budget itself is killed mid-run."""
    done = runner.run("--sandbox", "off")
    try:
        # Killed: ci-budget, and the stand-in Runner.Worker, whose argv names ci_budget.cli.
        assert done.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), done.stderr[-2000:]
        assert "the tests run without a sandbox" in done.stderr
        read = runner.log("test_a_read")
        for name in ("ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "INPUT_TOKEN"):
            assert f"FOUND {name} in /proc/" in read, read
        assert "FOUND credentials" in read and "FOUND ssh_key" in read
        reached = {k: not v for k, v in runner.untouched().items() if k != "credentials"}
        assert all(reached.values()), reached
        deadline = time.monotonic() + 10
        while not _marked(runner.marker + "-survivor") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(runner.marker + "-survivor"), "the survivor outlived ci-budget"
        # ci-budget died during test_c_kill: it and the fork chain were never recorded.
        assert sorted(_results(runner)) == ["test_a_read", "test_b_write"]
    finally:
        runner.kill_leftovers()
