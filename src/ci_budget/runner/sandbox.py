"""The tests' sandbox: every test file runs inside bubblewrap (`bwrap`), because on a GPU job
the test code is the attacker. Inside, the job looks as it would to the runner's own user,
minus every credential and every runner internal.

- Processes: a PID namespace of its own, whose PID 1 is `sandbox_init.py`. The tests cannot see
  or signal ci-budget, the runner or any other process (nor read their /proc); when the file's
  command ends, the namespace ends and the kernel kills whatever is left. IPC (its own /dev/shm
  and semaphores), UTS and cgroup namespaces too.
- Files: see `sandbox_mounts`: read-only; the runner's directories, ci-budget, the credential
  files of $HOME and the rest of $HOME hidden; the checkout writable (its .git read-only, the
  job token in .git/config taken out); the caches readable and writable through an overlay of
  the run, whose writes go when the run ends (`sandbox_init.layers`); /tmp private to the run.
- Identity: the runner's own user (uid and groups), with no capabilities and never new
  privileges (no setuid, no sudo): on a non-root runner a user namespace of its uid; on a root
  runner uid 0 with an empty capability bounding set (root-owned files are its own, as outside;
  every path it must not reach is not mounted).
- Results: the tests write only into the run's `out` folder; ci-budget reads what it expects
  from there as capped data (`outcome`).
- Network: the host's unless `network="none"` (docs/security.md: why).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_budget.runner import sandbox_mounts as sm
from ci_budget.runner.proctree import SETTLE, ProcessTree, SandboxedTree

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
    caches: tuple[str, ...] = ()  # more caches than the default ones, named by the workflow
    env_drop: tuple[str, ...] = ()  # the tests' environment (`environment.scrubbed_env`)
    env_keep: tuple[str, ...] = ()
    install: bool = False  # an install step runs first: the interpreter's prefix is layered too

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
        bwrap = _tool("bwrap")
        if bwrap is None:
            raise SandboxError("bwrap (bubblewrap) is not installed: apt-get install bubblewrap "
                               f"(scripts/sandbox_setup.sh), or {OPT_OUT}")  # fmt: skip
        self.root_user = os.geteuid() == 0
        self.setpriv = _tool("setpriv") if self.root_user else None
        if self.root_user and self.setpriv is None:
            raise SandboxError(
                f"setpriv (util-linux) is not installed; needed as root, or {OPT_OUT}"
            )
        self.bwrap: str = bwrap
        self.version = _version(bwrap)
        self.devices = sm.gpu_devices()
        base = env.get("RUNNER_TEMP")
        self.dir = Path(tempfile.mkdtemp(prefix="ci-budget-sandbox-",
                                         dir=base if base and os.path.isdir(base) else None))  # fmt: skip
        self.scratch = {k: str(self.dir / k) for k in ("tmp", "home", "out", "lib", "layers")}
        for name, path in self.scratch.items():
            # /tmp as on the host (sticky, open): bwrap itself, without capabilities, must pass
            # through it to a checkout under /tmp. The scratch folder around it is private.
            os.mkdir(path)
            os.chmod(path, {"lib": 0o755, "tmp": 0o1777}.get(name, 0o700))
        self.home = sm._real(env.get("HOME"))
        self.hide = sm.runner_paths(env) + self._own_paths()
        secrets = sm.credential_paths(self.home)
        interp = sm.interpreter_paths(python)
        layered = [*policy.caches, *(interp if policy.install else [])]
        self.caches = [c for c in sm.cache_paths(env, layered, self.hide)
                       if not any(sm.inside(c, x) for x in secrets)]  # fmt: skip
        self.expose = [sm.Mount("ro-bind", p, p) for p in interp
                       if not any(sm.inside(p, c) for c in self.caches)]  # fmt: skip
        self.expose += [sm.parse_expose(spec) for spec in policy.expose]
        shown = self.caches + [m.dest for m in self.expose]
        self.secrets = [x for x in secrets if any(sm.inside(x, s) for s in shown)]
        shutil.copyfile(Path(__file__).with_name("sandbox_init.py"), self.lib / INIT)
        (self.lib / "empty").write_bytes(b"")  # what a credential file reads as

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
        """ci-budget's code, its venv and the folder of its dependencies (the action's
        per-job unpack of its locked wheels runs without a venv)."""
        import sys

        import pydantic

        here = Path(__file__).resolve().parents[2]  # src/ (or site-packages) holding ci_budget
        own = [sm._real(here), sm._real(Path(pydantic.__file__).resolve().parents[1])]
        if sys.prefix != sys.base_prefix:
            own.append(sm._real(sys.prefix))
        return list(dict.fromkeys(p for p in own if p))

    def describe(self) -> str:
        version = ".".join(map(str, self.version)) or "?"
        who = f"the runner's user (uid {os.geteuid()}, no capabilities)"
        gpus = f"{len(self.devices)} GPU device node(s)" if self.devices else "no GPU device nodes"
        caches = ", ".join(self.caches) or "none"
        return (f"bubblewrap {version}, tests as {who}, network {self.policy.network}, {gpus}, "
                f"caches {caches} (writes discarded after the run)")  # fmt: skip

    def close(self) -> None:
        # overlayfs leaves its work folders mode 000: open them so the run's folder can go
        for top, dirs, _ in os.walk(self.scratch["layers"]):
            for name in dirs:
                os.chmod(os.path.join(top, name), 0o700)
        shutil.rmtree(self.dir, ignore_errors=True)

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if k not in _DROP_ENV}
        env.update(HOME=self.home or self.scratch["home"], TMPDIR="/tmp")
        return env

    def _git_config(self, checkout: str) -> list[sm.Mount]:
        """.git/config without what actions/checkout persists there (the job token as an
        http.extraheader): a copy of the run replaces it."""
        path = os.path.join(checkout, ".git", "config")
        try:
            lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines(True)
        except OSError:
            return []
        kept = [x for x in lines if not re.search(r"extraheader|authorization", x, re.I)]
        if kept == lines:
            return []
        copy = self.lib / "git-config"
        copy.write_text("".join(kept), encoding="utf-8")
        return [sm.Mount("ro-bind", path, str(copy))]

    def argv(self, cmd: list[str], cwd: str, checkout: str, status_fd: int | None = None,
             grace: float = 5.0, pinned: Sequence[str] = (), env_fd: int | None = None
             ) -> list[str]:  # fmt: skip
        """[init layers ... --] bwrap ... -- [setpriv ...] [init STATUS_FD SETTLE GRACE --] cmd.
        The caches are writable only through their overlays (`sandbox_init.layers`), which only
        a file's run gets (`status_fd`); a probe sees them read-only."""
        caches = self.caches if status_fd is not None else []
        kind = "bind" if caches else "ro-bind"
        view = sm.View(hide=self.hide, expose=self.expose, checkout=checkout,
                       scratch=self.scratch, home=self.home, devices=self.devices,
                       pinned=list(pinned), secrets=self.secrets,
                       caches=[sm.Mount(kind, c, c) for c in self.caches],
                       extra=self._git_config(checkout))  # fmt: skip
        init = str(self.lib / INIT)
        args = [self.python, "-I", "-S", init, "layers", self.scratch["layers"], *caches, "--"]
        args = (args if caches else []) + [self.bwrap]
        if self.root_user:  # privileged bwrap; setpriv then empties the bounding set
            args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETPCAP"]
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
            assert self.setpriv is not None  # __init__ refuses root without it
            args += [self.setpriv, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
                     "--"]  # fmt: skip
        if status_fd is not None:
            args += [self.python, "-I", "-S", init, str(status_fd), str(SETTLE), str(grace)]
            args += (["--env", str(env_fd)] if env_fd is not None else []) + ["--"]
        return args + list(cmd)

    def start(self, cmd: list[str], cwd: Path, env: Mapping[str, str], checkout: str,
              grace: float, pinned: Sequence[str] = ()) -> SandboxedTree:  # fmt: skip
        argv = lambda fd, env_fd: self.argv(cmd, str(cwd), checkout, fd, grace, pinned, env_fd)  # noqa: E731
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
            raise SandboxError(f"the runner's user, without capabilities, cannot read the "
                               f"checkout {checkout}: give it the checkout (chown); or {OPT_OUT}")  # fmt: skip
        why = next((x for x in lines if x.startswith(("bwrap:", "setpriv:"))), None)
        why = why or (lines[-1] if lines else f"exit {tree.proc.returncode}")
        hint = _userns_hint() if "uid map" in why or "namespace" in why else ""
        raise SandboxError(f"the tests' sandbox cannot start: {why}{hint}; or {OPT_OUT}")


def _userns_hint(proc: str = "/proc/sys") -> str:
    """Why the kernel refuses a non-root runner its user namespace, and the fix."""

    def knob(name: str) -> str:
        try:
            return Path(proc, name).read_text().strip()
        except OSError:
            return ""

    if knob("kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (" (Ubuntu 23.10+/24.04: AppArmor restricts user namespaces; run "
                "scripts/sandbox_setup.sh as root once: a profile for bwrap alone)")  # fmt: skip
    if knob("kernel/unprivileged_userns_clone") == "0":
        return " (user namespaces are off: sysctl -w kernel.unprivileged_userns_clone=1)"
    if knob("user/max_user_namespaces") == "0":
        return " (user namespaces are off: sysctl -w user.max_user_namespaces=15000)"
    return " (in a container? let it create user namespaces, or run the runner as root)"


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


def contain(box: Sandbox | None, cmd: list[str], cwd: Path, env: Mapping[str, str],
            root: Path, grace: float, pinned: Sequence[str] = ()) -> ProcessTree | SandboxedTree:  # fmt: skip
    """The one way PR code (a test file, the install step) is started, whichever the mode: in
    the run's sandbox `box` (opened by `open_sandbox` from the policy), else in a session of
    its own under `ProcessTree`. Both trees are watched and ended the same way (`proc`,
    `record_descendants`, `terminate`, `cleanup`, `returncode`, `leftover_names`)."""
    if box is None:
        return ProcessTree(cmd, cwd, env)
    return box.start(cmd, cwd, env, sm.checkout_of(root), grace, pinned)


def probe_wrap(box: Sandbox | None, root: Path) -> Callable[[list[str]], list[str]] | None:
    """How a short probe (the tests' interpreter, the GPU) runs, whichever the mode: wrapped
    into the run's sandbox `box`, or as given (None)."""
    return None if box is None else box.wrap(sm.checkout_of(root))
