"""The tests' sandbox is transparent to what sglang's tests do and closed to the rest, in a
stood-in self-hosted runner (issue 31's acceptance), as root and as a non-root runner user.

The runner: an install directory whose `bin/Runner.Worker` (a copy of bash) starts `ci-budget
run` with a job's step environment and default settings (GITHUB_ACTIONS=true: the sandbox is
on), `.credentials` and `_diag`, a work directory with `_temp` and the file commands, `_actions`,
a tool cache holding ci-budget's venv, another checkout, and a $HOME holding a model cache
beside every usual credential file. The checkout's .git/config holds the job token, as
actions/checkout leaves it. The PR's ci-budget.toml tries every environment key there is.

The registered test does what an sglang test does (writes into its folder and the repository
root, reads a model from $HOME/.cache/huggingface and writes the cache, a multiprocessing.Pool
and a shared-memory block over /dev/shm, HF_TOKEN) and probes for everything it must not reach:
each found thing is a FOUND line in its log, and the test fails.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pydantic
import pytest
from helpers.sandbox import as_user, sandbox_or_skip

from ci_budget.models import RunResults

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")
ROOT = Path(__file__).resolve().parents[2]
USER = "ci-budget-runner"
CREDENTIALS = [".ssh/id_rsa", ".docker/config.json", ".netrc", ".git-credentials",
               ".config/gh/hosts.yml", ".aws/credentials", ".kube/config", ".pypirc"]  # fmt: skip

MODEL_TEST = """\
import glob, multiprocessing, os, sys
from multiprocessing import shared_memory
from pathlib import Path


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=60, stage="base-b", runner_config="1-gpu-large")
SECRETS = SECRETS_LIST
HIDDEN = HIDDEN_LIST


def square(x):
    return x * x


def test_what_a_model_test_does():
    here = Path(__file__).parent
    (here / "server.log").write_text("in the test folder")
    (here.parents[1] / "logs").mkdir(exist_ok=True)
    (here.parents[1] / "logs" / "run.log").write_text("in the repository root")
    cache = Path(os.environ["HOME"]) / ".cache" / "huggingface" / "hub"
    assert (cache / "model.safetensors").read_text() == "weights"
    (cache / "written-by-the-test").write_text("a later job must not see this")
    with multiprocessing.Pool(2) as pool:
        assert pool.map(square, range(4)) == [0, 1, 4, 9]
    block = shared_memory.SharedMemory(create=True, size=1 << 20)
    assert os.path.exists("/dev/shm/" + block.name)
    block.close()
    block.unlink()
    assert os.environ["HF_TOKEN"] == "hf_model_download"
    status = dict(x.split(":\t") for x in open("/proc/self/status").read().splitlines())
    caps = {int(v, 16) for k, v in status.items() if k.startswith("Cap")}
    print("UID", os.getuid(), "CAPS", caps, "NO_NEW_PRIVS", status["NoNewPrivs"])


def test_probes_find_nothing():
    found = []
    for path in glob.glob("/proc/[0-9]*"):
        for part in ("environ", "cmdline"):
            try:
                data = open(path + "/" + part, "rb").read()
            except OSError:
                continue
            found += [f"{s} in {path}/{part}" for s in SECRETS if s.encode() in data]
    found += [f"{s} in os.environ" for s in SECRETS if s in str(os.environ)]
    found += [f"{n} in os.environ" for n in os.environ if n.startswith(("GITHUB_ENV", "GITHUB_PATH",
              "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY", "ACTIONS_"))]
    found += [f"file {p}" for p in HIDDEN if os.path.lexists(p)]
    git_config = open(".git/config").read()
    found += [f"{s} in .git/config" for s in SECRETS if s in git_config]
    for line in found:
        print("FOUND", line)
    assert not found
"""


class Runner:
    def __init__(self, base: Path, under_home: bool = False):
        self.secret = f"ghs_{uuid.uuid4().hex}"
        self.runner = base / ("home" if under_home else "") / "actions-runner"
        work = self.runner / "_work"
        self.temp, self.tool = work / "_temp", work / "_tool"
        self.checkout = work / "hello-gpu" / "hello-gpu"
        self.home = base / "home"
        commands = self.temp / "_runner_file_commands"
        self.commands = {n: commands / f"{n.lower()}_{uuid.uuid4()}" for n in (
            "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")}  # fmt: skip
        self.model = self.home / ".cache" / "huggingface" / "hub" / "model.safetensors"
        hidden = {
            self.runner / ".credentials": self.secret, self.runner / "_diag" / "Worker.log": "x",
            work / "_actions" / "actions" / "checkout" / "v4" / "action.yml": "x",
            self.tool / "ci-budget" / "wheels" / "pydantic-2.14.4-py3-none-any.whl": "x",
            work / "other-repo" / "other-repo" / "README": "x", self.model: "weights",
            **{self.home / c: self.secret for c in CREDENTIALS},
            **dict.fromkeys(self.commands.values(), ""),
        }  # fmt: skip
        for path, text in hidden.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (self.runner / "bin").mkdir()
        shutil.copy2("/bin/bash", self.runner / "bin" / "Runner.Worker")
        test = self.checkout / "test" / "registered" / "test_model.py"
        test.parent.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.checkout)], check=True)
        subprocess.run(["git", "-C", str(self.checkout), "config", "http.https://github.com/"
                        ".extraheader", f"AUTHORIZATION: basic {self.secret}"], check=True)  # fmt: skip
        probe = [str(p) for p in hidden if p != self.model]
        test.write_text(MODEL_TEST.replace("SECRETS_LIST", repr([self.secret, "ghs_runtime"]))
                        .replace("HIDDEN_LIST", repr(probe)))  # fmt: skip
        (self.checkout / "pytest.ini").write_text("[pytest]\naddopts = -s -p no:hypothesispytest\n")
        # The PR's own config: every environment key, set to open the sandbox. Ignored.
        (self.checkout / "ci-budget.toml").write_text(
            'env-drop = ["HOME", "HF_TOKEN", "RUNNER_*"]\n'
            'env-keep = ["GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_*", "GITHUB_*", "INPUT_*", "*"]\n'
        )

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
        return env | {k: str(v) for k, v in self.commands.items()} | {
            "GITHUB_ACTIONS": "true", "HOME": str(self.home), "RUNNER_TEMP": str(self.temp),
            "RUNNER_TOOL_CACHE": str(self.tool), "RUNNER_WORKSPACE": str(self.checkout.parent),
            "GITHUB_WORKSPACE": str(self.checkout), "GITHUB_TOKEN": self.secret,
            "GH_TOKEN": self.secret, "MY_COPY": f"token {self.secret}",
            "ACTIONS_RUNTIME_TOKEN": "ghs_runtime", "HF_TOKEN": "hf_model_download",
        }  # fmt: skip

    def run(self, user: list[str] = (), *args: str) -> subprocess.CompletedProcess:
        out = self.temp / "results.json"
        cli = [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(self.checkout),
               "--suite", "base-b-test-1-gpu-large", "--out", str(out),
               "--artifacts-dir", str(self.temp / "artifacts"), "--continue-on-error", *args]  # fmt: skip
        worker = [str(self.runner / "bin" / "Runner.Worker"), "-c", '"$@"; exit $?', "step"]
        return subprocess.run([*user, *worker, *cli], env=self.env(), capture_output=True,
                              text=True, timeout=300, cwd=self.checkout)  # fmt: skip

    def log(self) -> str:
        return (self.temp / "artifacts" / "test__registered__test_model.log").read_text()

    def check(self, done: subprocess.CompletedProcess, uid: int) -> None:
        log = self.log()
        assert "FOUND" not in log, log
        assert f"UID {uid} CAPS {{0}} NO_NEW_PRIVS 1" in log, log  # its own uid, nothing more
        files = RunResults.model_validate_json((self.temp / "results.json").read_text()).files
        assert [f.status for f in files] == ["passed"], log + done.stdout[-3000:] + done.stderr
        assert done.returncode == 0
        assert "the config file's env-drop and env-keep are ignored" in done.stderr
        assert (self.checkout / "test" / "registered" / "server.log").is_file()
        assert (self.checkout / "logs" / "run.log").is_file()
        assert sorted(p.name for p in self.model.parent.iterdir()) == ["model.safetensors"]
        assert all(p.read_text() == "" for p in self.commands.values())
        assert "sandbox: bubblewrap" in done.stdout
        assert not list(self.temp.glob("ci-budget-sandbox-*"))  # the run's layers are gone


def _user_uid() -> int:
    try:
        return pwd.getpwnam(USER).pw_uid
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", USER], check=True)
        return pwd.getpwnam(USER).pw_uid


@pytest.mark.parametrize("under_home", [False, True], ids=["runner-beside-home", "runner-in-home"])
def test_a_model_test_runs_as_on_the_runner_and_reaches_nothing_else(tmp_path, under_home):
    sandbox_or_skip()
    runner = Runner(tmp_path, under_home)
    runner.check(runner.run(), os.geteuid())


def test_without_the_sandbox_the_probes_find_every_one(tmp_path):
    """The control: each probe is real."""
    runner = Runner(tmp_path)
    runner.run([], "--sandbox", "off")
    found = [x for x in runner.log().splitlines() if x.startswith("FOUND")]
    assert len(found) >= 2 + 5 + 8 + 5 + 1, found  # tokens, runner files, home, commands, git
    assert any(".git/config" in x for x in found) and any("/environ" in x for x in found)


def test_the_same_on_a_runner_that_is_not_root(tmp_path):
    sandbox_or_skip()
    runner = Runner(tmp_path / "base")
    if os.geteuid() == 0:
        if shutil.which("useradd") is None:
            pytest.skip("no useradd to create a non-root runner user")
        uid = _user_uid()
        user = as_user(uid, tmp_path, {str(ROOT)})
    else:
        uid, user = os.geteuid(), []  # this machine's runner user is already not root
    runner.check(runner.run(user), uid)


HEADER = """\
def register_cuda_ci(**kwargs):
    pass
register_cuda_ci(est_time=10, stage="base-b", runner_config="1-gpu-large")
"""
LEFTOVER = """
import ctypes, subprocess, sys
def test_leaves_a_server():
    code = "import ctypes, time; ctypes.CDLL(None).prctl(15, b'::stop-commands::x'); time.sleep(60)"
    subprocess.Popen([sys.executable, "-c", code])
"""


def _live_commands(text: str) -> list[str]:
    """Lines the runner would read as workflow commands (it cuts at \\n, \\r and \\r\\n)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [x for x in lines if x.lstrip().startswith("::") or "##[" in x]


def test_pr_text_leaves_no_workflow_command_in_the_job_log(tmp_path):
    """A file named `##[add-mask]x.py`, a leftover process named `::stop-commands::x` and a
    collection error holding `##[error]`, through `ci-budget run` as a job runs it."""
    sandbox_or_skip()
    tests = tmp_path / "repo" / "test" / "registered"
    tests.mkdir(parents=True)
    (tests / "##[add-mask]x.py").write_text(HEADER + "def test_ok():\n    print('FAILED')\n")
    (tests / "test_leftover.py").write_text(HEADER + LEFTOVER)
    (tests / "test_broken.py").write_text(
        HEADER + "raise RuntimeError('\\r##[error]broken ::error::x')\n"
    )
    env = {**os.environ, "GITHUB_ACTIONS": "true", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(tmp_path / "repo"),
         "--suite", "base-b-test-1-gpu-large", "--out", str(tmp_path / "r.json"),
         "--continue-on-error", "--grace", "0.5", "test/registered/##[add-mask]x.py",
         "test/registered/test_leftover.py", "test/registered/test_broken.py"],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    log = done.stdout + done.stderr
    assert "add-mask" in log and "stop-commands" in log and "broken" in log, log
    assert _live_commands(log) == [], log


INSTALL = """\
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo 'VALUE = "installed in the sandbox"' > "$site/installed_mod.py" && echo "installed into $site"
for target in $PLANT_JOB "$PLANT_TOOL" $PLANT_OWN; do
  if (echo 'BASH_ENV=/tmp/evil' >>"$target") 2>/dev/null; then echo "WROTE $target"; fi
done
echo "FROM_INSTALL=set by the install step" >>"$GITHUB_ENV"  # its own, for the tests
echo done
"""
USES_INSTALL = (
    HEADER
    + """
import os
import installed_mod
assert installed_mod.VALUE == "installed in the sandbox"
assert os.environ["FROM_INSTALL"] == "set by the install step"
"""
)


def test_the_install_step_runs_in_the_sandbox_into_the_tests_interpreter(tmp_path):
    """`run --install CMD`: what it installs into the tests' interpreter is there for the files
    and gone after the run; it cannot write the file commands, the tool cache or ci-budget."""
    sandbox_or_skip()
    runner = Runner(tmp_path)
    venv = tmp_path / "tests-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (runner.checkout / "ci-budget.toml").write_text('mode = "script"\n')
    (runner.checkout / "test" / "registered" / "test_model.py").write_text(USES_INSTALL)
    tool_file = runner.tool / "ci-budget" / "wheels" / "pydantic-2.14.4-py3-none-any.whl"
    own = Path(sys.prefix) / "pyvenv.cfg"
    before = own.read_text()
    # The folder ci-budget's dependencies are imported from (in a job: its own under RUNNER_TEMP)
    deps = Path(pydantic.__file__).resolve().parents[1] / "zz_planted.pth"
    env = {"PLANT_TOOL": str(tool_file), "PLANT_OWN": f"{own} {deps}",
           "PLANT_JOB": " ".join(str(p) for p in runner.commands.values()),
           "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}  # fmt: skip
    orig = runner.env
    runner.env = lambda: orig() | env  # type: ignore[method-assign]
    done = runner.run([], "--python", str(venv / "bin" / "python"), "--install", INSTALL)
    files = RunResults.model_validate_json((runner.temp / "results.json").read_text()).files
    assert [f.status for f in files] == ["passed"], done.stdout[-3000:] + done.stderr[-2000:]
    assert "installed into" in done.stdout and "done" in done.stdout, done.stdout
    assert not [x for x in done.stdout.splitlines() if x.startswith("WROTE")], done.stdout
    assert not list(venv.rglob("installed_mod.py"))  # gone with the run
    assert all(p.read_text() == "" for p in runner.commands.values())
    assert tool_file.read_text() == "x" and own.read_text() == before and not deps.exists()


@pytest.mark.parametrize("key", ['sandbox = "off"', 'sandbox-network = "none"',
                                 'sandbox-expose = ["/"]', 'unsandboxed-tests = true'])  # fmt: skip
def test_no_sandbox_key_in_the_prs_config_is_accepted(tmp_path, key):
    """The config file has no sandbox key (the policy is the workflow's): one spelled as if it
    had is refused with one line, and nothing runs."""
    repo = tmp_path / "repo"
    (repo / "test" / "registered").mkdir(parents=True)
    (repo / "test" / "registered" / "test_x.py").write_text(HEADER + "def test_x():\n    pass\n")
    (repo / "ci-budget.toml").write_text(key + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(repo), "--suite",
         "base-b-test-1-gpu-large", "--out", str(tmp_path / "r.json"), "--sandbox", "off"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert key.split(" ")[0] in done.stderr and not (tmp_path / "r.json").exists()
