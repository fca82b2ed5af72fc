"""The tests' sandbox: every test file runs inside bubblewrap (`bwrap`), because on a GPU job
the test code is the attacker.

- Processes: a PID namespace of its own, whose PID 1 is `sandbox_init.py`. The tests cannot see
  or signal ci-budget, the runner or any other process; when the file's command ends, the
  namespace ends and the kernel kills whatever is left. IPC, UTS and cgroup namespaces too.
- Files: see `sandbox_mounts`: read-only; the runner's directories, ci-budget and $HOME hidden;
  the checkout writable (its .git read-only); /tmp and $HOME private to the run.
- Identity: on a non-root runner a user namespace without capabilities (the runner's uid
  outside: the kernel offers a non-root process no other) and no further user namespaces; on a
  root runner uid/gid 65534 with only the groups of the GPU device nodes. Never new privileges
  (no setuid, no sudo).
- Results: the tests write only into the run's `out` folder; ci-budget reads what it expects
  from there as capped data (`datafiles`).
- Network: the host's unless `network="none"` (model downloads need it by default).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ci_budget.runner import sandbox_mounts as sm
from ci_budget.runner.sandbox_tree import SETTLE, SandboxedTree

NOBODY = 65534
INIT = "ci_budget_sandbox_init.py"
OPT_OUT = "--sandbox off (action input unsandboxed-tests-i-accept-the-risk: true)"
_DROP_ENV = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "SSH_AUTH_SOCK")


class SandboxError(Exception):
    """The sandbox cannot be set up here; the message is one line saying why and what to do."""


@dataclass(frozen=True)
class SandboxPolicy:
    mode: str = "auto"  # auto: on in a GitHub Actions job, off elsewhere
    expose: tuple[str, ...] = ()  # PATH or PATH:rw
    network: str = "host"

    def wanted(self, in_actions: bool) -> bool:
        return self.mode == "on" or (self.mode == "auto" and in_actions)


def _tool(name: str) -> str | None:
    """Distribution binaries first: a PATH an earlier step changed does not pick them."""
    for path in (f"/usr/bin/{name}", f"/bin/{name}"):
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def _version(bwrap: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out.stdout)
    return tuple(int(g) for g in m.groups() if g is not None) if m else ()


class Sandbox:
    """One run's sandbox: its scratch folders and how to start a command in it."""

    def __init__(self, policy: SandboxPolicy, python: str, env: Mapping[str, str]):
        self.policy, self.python = policy, python
        self.bwrap = _tool("bwrap")
        if self.bwrap is None:
            raise SandboxError("bwrap (bubblewrap) is not installed: apt-get install bubblewrap "
                               f"(scripts/sandbox_setup.sh), or {OPT_OUT}")  # fmt: skip
        self.root_user = os.geteuid() == 0
        self.setpriv = _tool("setpriv") if self.root_user else None
        if self.root_user and self.setpriv is None:
            raise SandboxError(
                f"setpriv (util-linux) is not installed; needed as root, or {OPT_OUT}"
            )
        self.version = _version(self.bwrap)
        self.devices = sm.gpu_devices()
        base = env.get("RUNNER_TEMP")
        self.dir = Path(tempfile.mkdtemp(prefix="ci-budget-sandbox-",
                                         dir=base if base and os.path.isdir(base) else None))  # fmt: skip
        self.scratch = {k: str(self.dir / k) for k in ("tmp", "home", "out", "lib")}
        for name, path in self.scratch.items():
            # /tmp as on the host (sticky, open): bwrap itself, without capabilities, must pass
            # through it to a checkout under /tmp. The scratch folder around it is private.
            os.mkdir(path)
            os.chmod(path, {"lib": 0o755, "tmp": 0o1777}.get(name, 0o700))
            if self.root_user and name != "lib":
                os.chown(path, NOBODY, NOBODY)
        self.home = sm._real(env.get("HOME"))
        self.hide = sm.runner_paths(env) + self._own_paths()
        self.expose = [sm.Mount("ro-bind", p, p) for p in sm.interpreter_paths(python)]
        self.expose += [sm.parse_expose(spec) for spec in policy.expose]
        shutil.copyfile(Path(__file__).with_name("sandbox_init.py"), self.lib / INIT)

    @property
    def out(self) -> Path:
        """Where the tests write their report files."""
        return Path(self.scratch["out"])

    @property
    def lib(self) -> Path:
        """Read-only in the sandbox: the report plugins and the init."""
        return Path(self.scratch["lib"])

    @staticmethod
    def _own_paths() -> list[str]:
        """ci-budget's code and venv."""
        import sys

        here = Path(__file__).resolve().parents[2]  # src/ (or site-packages) holding ci_budget
        own = [sm._real(here)]
        if sys.prefix != sys.base_prefix:
            own.append(sm._real(sys.prefix))
        return [p for p in own if p]

    def describe(self) -> str:
        version = ".".join(map(str, self.version)) or "?"
        who = (f"uid {NOBODY} (the runner is root)" if self.root_user
               else "a user namespace of the runner's uid")  # fmt: skip
        gpus = f"{len(self.devices)} GPU device node(s)" if self.devices else "no GPU device nodes"
        return f"bubblewrap {version}, tests as {who}, network {self.policy.network}, {gpus}"

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if k not in _DROP_ENV}
        env.update(HOME=self.home or self.scratch["home"], TMPDIR="/tmp")
        if self.root_user:
            env.update(USER="nobody", LOGNAME="nobody")
        return env

    def argv(self, cmd: list[str], cwd: str, checkout: str, status_fd: int | None = None,
             grace: float = 5.0, pinned: list[str] = ()) -> list[str]:  # fmt: skip
        """bwrap ... -- [setpriv ...] [init STATUS_FD SETTLE GRACE --] cmd."""
        view = sm.View(hide=self.hide, expose=self.expose, checkout=checkout,
                       scratch=self.scratch, home=self.home, devices=self.devices,
                       searchable=not self.root_user, pinned=list(pinned))  # fmt: skip
        args = [self.bwrap]
        if self.root_user:  # privileged bwrap; setpriv then drops to the sandbox user
            args += ["--cap-drop", "ALL"]
            args += [a for c in ("SETUID", "SETGID", "SETPCAP") for a in ("--cap-add", f"CAP_{c}")]
        else:
            args += ["--unshare-user"] + (["--disable-userns"] if self.version >= (0, 8) else [])
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--die-with-parent", "--new-session"]  # fmt: skip
        if self.policy.network == "none":
            args.append("--unshare-net")
        args += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        args += sm.mount_args(view.plan()) + ["--chdir", cwd]
        if status_fd is not None:
            args.append("--as-pid-1")
        args.append("--")
        if self.root_user:
            groups = sm.device_groups(self.devices)
            args += [self.setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}",
                     f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]  # fmt: skip
        if status_fd is not None:
            init = str(self.lib / INIT)
            args += [self.python, "-I", "-S", init, str(status_fd), str(SETTLE), str(grace), "--"]
        return args + list(cmd)

    def start(self, cmd: list[str], cwd: Path, env: Mapping[str, str], checkout: str,
              grace: float, pinned: list[str] = ()) -> SandboxedTree:  # fmt: skip
        argv = lambda fd: self.argv(cmd, str(cwd), checkout, fd, grace, pinned)  # noqa: E731
        return SandboxedTree(argv, self.env(env))

    def wrap(self, checkout: str) -> Callable[[list[str]], list[str]]:
        """For a short probe command (bwrap's own reaper as PID 1)."""
        return lambda cmd: self.argv(cmd, checkout, checkout)

    def check(self, checkout: str, env: Mapping[str, str]) -> None:
        """Start the sandbox once with its init, as the sandbox user, in the checkout: the
        failure, if any, as one line."""
        cmd = [self.python, "-I", "-S", "-c", _CAN_READ]
        tree = self.start(cmd, Path(checkout), env, checkout, grace=1.0)
        try:
            out, _ = tree.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            tree.terminate(1.0)
            raise SandboxError("starting the sandbox took over 60 s") from None
        if tree.status() is not None and tree.returncode == 0:
            return
        lines = out.decode(errors="replace").strip().splitlines()
        if tree.returncode == 13:
            raise SandboxError(f"uid {NOBODY}, the tests' user on a root runner, cannot read the "
                               f"checkout {checkout}: let others read it (chmod o+rx), or run "
                               f"the runner as a non-root user; or {OPT_OUT}")  # fmt: skip
        why = next((x for x in lines if x.startswith(("bwrap:", "setpriv:"))), None)
        why = why or (lines[-1] if lines else f"exit {tree.proc.returncode}")
        hint = " (Ubuntu 24.04: AppArmor's user-namespace restriction: scripts/sandbox_setup.sh)"
        hint = hint if "uid map" in why or "new namespace" in why else ""
        raise SandboxError(f"the tests' sandbox cannot start: {why}{hint}; or {OPT_OUT}")


# The sandbox's self-check: the tests' user lists the checkout (exit 13 when it may not).
_CAN_READ = "import os, sys\ntry:\n    os.listdir('.')\nexcept PermissionError:\n    sys.exit(13)"


def open_sandbox(policy: SandboxPolicy, python: str, checkout: str, env: Mapping[str, str],
                 in_actions: bool) -> Sandbox | None:  # fmt: skip
    """The run's sandbox, checked; None when the policy does not want one."""
    if not policy.wanted(in_actions):
        return None
    box = Sandbox(policy, python, env)
    try:
        box.check(checkout, env)
    except BaseException:
        box.close()
        raise
    return box
