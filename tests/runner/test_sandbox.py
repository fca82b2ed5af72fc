"""The tests' sandbox as `ci-budget run` uses it: a sandbox that cannot start is one line (and
runs nothing) unless the workflow opts out; timeouts and cancellation inside it; what it shows
of the machine; report files taken back as data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers.sandbox import sandbox_or_skip

from ci_budget.cli import main
from ci_budget.models import RunResults
from ci_budget.runner import outcome, sandbox
from ci_budget.runner.sandbox_mounts import Mount, View, gpu_devices, mount_args

SUITE = "base-b-test-1-gpu-large"
HEADER = """\
import os, subprocess, sys, time, unittest
def register_cuda_ci(**kwargs):
    pass
register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")
"""
# A grandchild that leaves the process group, ignores SIGTERM and sleeps: what a hung server
# launcher leaves. Its argv carries a marker this test can find from outside.
HANG = """
class TestDone(unittest.TestCase):
    def test_ok(self):
        pass


class TestHang(unittest.TestCase):
    def test_hang(self):
        code = "import os, signal, time; os.setsid(); signal.signal(15, signal.SIG_IGN); time.sleep(999)"
        subprocess.Popen([sys.executable, "-c", code, os.environ["MARKER"]])
        time.sleep(999)
"""
TOUCH = """
class TestTouch(unittest.TestCase):
    def test_touch(self):
        open(os.environ["TOUCHED"], "w").write("ran")
"""


def _repo(root: Path, files: dict[str, tuple[float, str]]) -> Path:
    for name, (est, body) in files.items():
        path = root / "test" / "registered" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER.format(est=est) + body)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:hypothesispytest\n")
    return root


def _marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_a_sandbox_that_cannot_start_is_one_line_and_runs_nothing(tmp_path, monkeypatch, capsys):
    root = _repo(tmp_path / "repo", {"test_touch.py": (10, TOUCH)})
    touched = tmp_path / "touched"
    monkeypatch.setenv("TOUCHED", str(touched))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # a job: the sandbox is required by default
    real = sandbox._tool
    monkeypatch.setattr(sandbox, "_tool", lambda name: None if name == "bwrap" else real(name))
    rc = main(["run", "--root", str(root), "--suite", SUITE, "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert "sandbox: bwrap (bubblewrap) is not installed" in err
    assert "unsandboxed-tests-i-accept-the-risk: true" in err
    assert not touched.exists()


def test_opting_out_in_writing_warns_and_runs_unsandboxed(tmp_path, monkeypatch, capsys):
    root = _repo(tmp_path / "repo", {"test_touch.py": (10, TOUCH)})
    touched = tmp_path / "touched"
    monkeypatch.setenv("TOUCHED", str(touched))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    out = tmp_path / "r.json"
    rc = main(["run", "--root", str(root), "--suite", SUITE, "--out", str(out), "--sandbox", "off"])
    assert rc == 0 and touched.read_text() == "ran"  # the host's paths: no sandbox around it
    assert "warning: the tests run without a sandbox (--sandbox off)" in capsys.readouterr().err


def test_in_the_sandbox_the_tests_write_only_their_own_tmp(tmp_path, monkeypatch):
    sandbox_or_skip()
    root = _repo(tmp_path / "repo", {"test_touch.py": (10, TOUCH)})
    touched = Path(f"/tmp/ci-budget-touched-{uuid.uuid4().hex[:12]}")  # the sandbox's /tmp
    monkeypatch.setenv("TOUCHED", str(touched))
    out = tmp_path / "r.json"
    try:
        rc = main(["run", "--root", str(root), "--suite", SUITE, "--out", str(out),
                   "--sandbox", "on"])  # fmt: skip
        (f,) = RunResults.model_validate_json(out.read_text()).files
        assert rc == 0 and f.status == "passed", f.message  # it wrote: into its own /tmp
        assert not touched.exists()
    finally:
        touched.unlink(missing_ok=True)


def test_a_timeout_in_the_sandbox_kills_everything_and_keeps_the_completed_classes(
    tmp_path, monkeypatch
):
    sandbox_or_skip()
    marker = f"ci-budget-hang-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("MARKER", marker)
    root = _repo(tmp_path / "repo", {"test_hang.py": (2, HANG)})
    out = tmp_path / "r.json"
    rc = main(["run", "--root", str(root), "--suite", SUITE, "--out", str(out), "--sandbox",
               "on", "--timeout-per-file", "8", "--grace", "0.5"])  # fmt: skip
    (f,) = RunResults.model_validate_json(out.read_text()).files
    assert rc == 1 and f.status == "timeout", f.message
    assert f.in_flight == "test/registered/test_hang.py::TestHang::test_hang"
    done = [(c.name.rsplit("::", 1)[-1], c.passed) for c in f.classes if c.complete]
    assert done == [("TestDone", 1)]
    assert _marked(marker) == []


def test_sigterm_to_ci_budget_cancels_the_file_and_its_sandbox(tmp_path):
    sandbox_or_skip()
    marker = f"ci-budget-hang-{uuid.uuid4().hex[:12]}"
    root = _repo(tmp_path / "repo", {"test_hang.py": (60, HANG)})
    out = tmp_path / "r.json"
    env = {**os.environ, "MARKER": marker}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), "--suite", SUITE,
         "--out", str(out), "--sandbox", "on", "--grace", "0.5"],
        stdout=subprocess.DEVNULL, start_new_session=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _grandchild(marker):
            assert time.monotonic() < deadline, "the test never started its grandchild"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    (f,) = RunResults.model_validate_json(out.read_text()).files
    assert f.status == "cancelled" and f.message.endswith("(SIGTERM)")
    assert _marked(marker) == []


def _grandchild(marker: str) -> bool:
    """The hang's grandchild is up: its argv ends with the marker (the test's own does not)."""
    for pid in _marked(marker):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().endswith(marker.encode() + b"\0"):
                return True
        except OSError:
            pass
    return False


# --- what the tests see --------------------------------------------------------------------


def _plan(tmp_path: Path, **kw) -> list[Mount]:
    scratch = {k: str(tmp_path / "s" / k) for k in ("tmp", "home", "out", "lib")}
    args = dict(hide=[], expose=[], checkout=str(tmp_path / "work" / "repo" / "repo"),
                scratch=scratch, home=None, devices=[])  # fmt: skip
    return View(**{**args, **kw}).plan()


def test_hidden_places_come_first_and_what_is_shown_inside_them_after(tmp_path):
    work, home = str(tmp_path / "work"), str(tmp_path / "home")
    checkout = str(tmp_path / "work" / "repo" / "repo")
    tool = str(tmp_path / "work" / "_tool")
    python = Mount("ro-bind", tool + "/Python/3.12", tool + "/Python/3.12")
    os.makedirs(checkout + "/.git")
    plan = _plan(tmp_path, hide=[work, tool, checkout + "/src"], expose=[python], home=home)
    dests = [m.dest for m in plan]
    kinds = {m.dest: m.kind for m in plan}
    # The work folder hides _tool already; a hidden path inside what is shown is not hidden.
    assert kinds[work] == "tmpfs" and tool not in dests and checkout + "/src" not in dests
    assert dests.index(work) < min(dests.index(python.dest), dests.index(checkout))
    assert kinds[checkout] == "bind" and kinds[checkout + "/.git"] == "ro-bind"
    assert dests.index(checkout) < dests.index(checkout + "/.git")
    assert kinds["/run"] == "tmpfs" and kinds["/tmp"] == "bind" and kinds[home] == "bind"
    args = mount_args(plan)
    pairs = [args[j : j + 4] for j in range(len(args))]
    # The folders on the way to a mount inside a hidden one are made open (bwrap: 0700).
    assert pairs.index(["--perms", "0755", "--dir", tool]) < args.index(python.dest)
    # Hidden places turn read-only after every mount inside them is made.
    binds = [j for j, a in enumerate(args) if a in ("--bind", "--ro-bind", "--dev-bind")]
    assert args.index("--remount-ro") > max(binds)
    assert ["--remount-ro", work] in [x[:2] for x in pairs]


def test_ci_budgets_outputs_in_the_checkout_are_read_only_to_the_tests(tmp_path):
    checkout = tmp_path / "work" / "repo" / "repo"
    (checkout / "results").mkdir(parents=True)
    (checkout / "results" / "shard0.json").write_text("{}")
    (checkout / "results" / "shard0-artifacts").mkdir()
    pinned = [str(checkout / "results" / "shard0.json"), str(checkout / "results/shard0-artifacts"),
              str(tmp_path / "elsewhere.json")]  # fmt: skip
    plan = {m.dest: m.kind for m in _plan(tmp_path, pinned=pinned)}
    for rel in ("results", "results/shard0.json", "results/shard0-artifacts"):
        assert plan[str(checkout / rel)] == "ro-bind", rel
    assert str(tmp_path / "elsewhere.json") not in plan  # hidden anyway


def test_gpu_device_nodes_are_found_by_name(tmp_path):
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "kfd", "sda", "null"):
        (tmp_path / name).write_text("")
    (tmp_path / "dri").mkdir()
    (tmp_path / "nvidia-caps").mkdir()
    found = [Path(p).name for p in gpu_devices(str(tmp_path))]
    assert sorted(found) == ["dri", "kfd", "nvidia-caps", "nvidia-uvm", "nvidia0", "nvidiactl"]


# --- report files as data ------------------------------------------------------------------


def test_report_files_are_read_only_as_capped_regular_files(tmp_path):
    out, art = tmp_path / "out", tmp_path / "art"
    out.mkdir()
    art.mkdir()
    secret = tmp_path / "runner-credentials"
    secret.write_text("the runner's key")
    (out / "a.json").write_text('{"ok": 1}')
    (out / "a.jsonl").symlink_to(secret)  # a link to what the runner can read
    os.mkfifo(out / "a.progress.jsonl")  # a reader that opens this blocks forever
    assert outcome.collect(out, art, "a") == [
        "report file refused: a.jsonl: not a regular file (Too many levels of symbolic links)",
        "report file refused: a.progress.jsonl: not a regular file",
    ]
    assert (art / "a.json").read_text() == '{"ok": 1}' and not (art / "a.jsonl").exists()
    assert outcome.read_capped(out, "a.json", cap=3) == "a.json: over 0 MiB"
    assert outcome.tail(out, "a.progress.jsonl") == b"" and outcome.tail(out, "a.jsonl") == b""


def test_a_copy_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    out, art = tmp_path / "out", tmp_path / "art"
    out.mkdir()
    art.mkdir()
    target = tmp_path / "runner-file"
    target.write_text("kept")
    (art / "a.json").symlink_to(target)
    (out / "a.json").write_text("{}")
    assert outcome.collect(out, art, "a") == []
    assert target.read_text() == "kept" and not (art / "a.json").is_symlink()


@pytest.mark.parametrize("mode", ["auto", "on", "off"])
def test_the_policy_is_on_in_a_job_unless_it_says_off(mode):
    policy = sandbox.SandboxPolicy(mode)
    assert policy.wanted(True) == (mode != "off")
    assert policy.wanted(False) == (mode == "on")


def test_a_path_under_the_hidden_home_is_shown_only_when_exposed(tmp_path):
    sandbox_or_skip()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key")
    (home / "models").mkdir()
    (home / "models" / "w.bin").write_text("weights")
    (home / "cache").mkdir()
    env = {**os.environ, "HOME": str(home)}
    policy = sandbox.SandboxPolicy("on", (str(home / "models"), f"{home / 'cache'}:rw"))
    box = sandbox.Sandbox(policy, sys.executable, env)
    script = (
        "import os, sys; h = sys.argv[1]\n"
        "print(os.path.exists(h + '/.ssh/id_rsa'), open(h + '/models/w.bin').read())\n"
        "for d in ('models', 'cache'):\n"
        "    try:\n"
        "        open(f'{h}/{d}/new', 'w').write('x'); print(d, 'writable')\n"
        "    except OSError as exc:\n"
        "        print(d, exc.strerror)\n"
    )
    try:
        cwd = str(tmp_path)
        done = subprocess.run(box.argv([sys.executable, "-c", script, str(home)], cwd, cwd),
                              env=box.env(env), capture_output=True, text=True)  # fmt: skip
    finally:
        box.close()
    assert done.stdout.splitlines() == [
        "False weights", "models Read-only file system", "cache writable"
    ], done.stdout + done.stderr  # fmt: skip
    assert (home / "cache" / "new").read_text() == "x" and not (home / "models" / "new").exists()


def test_credential_files_stay_hidden_in_a_home_the_workflow_exposes(tmp_path):
    sandbox_or_skip()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key")
    (home / ".netrc").write_text("machine github.com password secret")
    (home / "notes.txt").write_text("shown")
    env = {**os.environ, "HOME": str(home)}
    box = sandbox.Sandbox(sandbox.SandboxPolicy("on", (str(home),)), sys.executable, env)
    script = (
        "import os, sys; h = sys.argv[1]\n"
        "print(open(h + '/notes.txt').read(), os.listdir(h + '/.ssh'), "
        "repr(open(h + '/.netrc').read()))\n"
    )
    try:
        cwd = str(tmp_path)
        done = subprocess.run(box.argv([sys.executable, "-c", script, str(home)], cwd, cwd),
                              env=box.env(env), capture_output=True, text=True)  # fmt: skip
    finally:
        box.close()
    assert done.stdout.split() == ["shown", "[]", "''"], done.stdout + done.stderr


@pytest.mark.parametrize(
    ("knobs", "says"),
    [
        ({"kernel/apparmor_restrict_unprivileged_userns": "1"}, "scripts/sandbox_setup.sh"),
        ({"kernel/unprivileged_userns_clone": "0"}, "kernel.unprivileged_userns_clone=1"),
        ({"user/max_user_namespaces": "0"}, "user.max_user_namespaces=15000"),
        ({}, "in a container?"),
    ],
)
def test_a_refused_user_namespace_names_its_cause_and_fix(tmp_path, knobs, says):
    for name, value in knobs.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(value + "\n")
    assert says in sandbox._userns_hint(str(tmp_path))
