"""Start a test file's process and make sure none of its processes outlive it (Linux /proc).

Killing the process group is not enough: a test may start a server that calls setsid() (new
session, new group) and ignores SIGTERM, and once its parent exits it is re-parented to init, so
the parent chain is gone too. Four nets, each catching what the others can miss:
1. the process group of the file's process (it starts in a new session, pgid == pid);
2. every descendant seen while the file runs, recorded by polling /proc (pid + start time, so a
   recycled pid is never killed by mistake);
3. a per-file token in the environment (CI_BUDGET_RUN_TOKEN=<uuid>), inherited by every
   descendant unless it rewrites its environment; /proc/<pid>/environ shows it even after
   setsid() and re-parenting;
4. the runner is a child subreaper (Linux prctl): an orphaned descendant is re-parented to the
   runner instead of init, so one started through `sh -c "env -i python ... &"` that calls
   setsid() (no group, no token, its parent gone before a poll saw it) is still the runner's
   child. Files run one at a time, so a child adopted while a file runs is that file's.
Processes are killed with SIGTERM, given a short grace, then SIGKILLed, and the scan repeats
until nothing carrying the token or recorded as a descendant is left alive.

In the sandbox (`SandboxedTree`) a file's process is watched and ended the same way: the
namespace's init (`sandbox_init.py`) reports the command's exit status and what it had to kill
through a pipe.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

TOKEN_VAR = "CI_BUDGET_RUN_TOKEN"
PROC = Path("/proc")
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def _prctl(option: int, arg) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, arg, 0, 0, 0)


@contextlib.contextmanager
def child_subreaper() -> Iterator[bool]:
    """Make this process a child subreaper for the block (Linux); yields whether it is one.
    The previous setting is restored after, so a long-lived caller is left as it was."""
    if not sys.platform.startswith("linux"):
        yield False
        return
    try:
        before = ctypes.c_int(0)
        _prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(before))
        enabled = _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0
    except (OSError, AttributeError):  # no libc prctl: the other nets still apply
        yield False
        return
    try:
        yield enabled
    finally:
        if enabled and not before.value:
            _prctl(PR_SET_CHILD_SUBREAPER, 0)


def children_of(parent: int) -> dict[int, int]:
    """pid -> start time of the live children of `parent`."""
    found = {}
    for pid in _pids():
        st = _stat(pid)
        if st is not None and st[0] == parent and st[1] not in ("Z", "X"):
            found[pid] = st[2]
    return found


def reap(pids) -> None:
    """Collect the exit status of adopted children that died, so no zombie is left."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except (ChildProcessError, OSError):
            pass


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(ppid, state, start time in clock ticks) of a live pid, or None."""
    try:
        data = (PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: split after the last ')'.
    rest = data[data.rfind(b")") + 2 :].split()
    try:
        return int(rest[1]), rest[0].decode(), int(rest[19])
    except (IndexError, ValueError):
        return None


def _pids() -> list[int]:
    try:
        return [int(p) for p in os.listdir(PROC) if p.isdigit()]
    except OSError:
        return []


def alive(pid: int) -> bool:
    """Running or stopped; a zombie has already exited and holds nothing but its pid."""
    st = _stat(pid)
    return st is not None and st[1] not in ("Z", "X")


class ProcessTree:
    """One file's process and everything it starts."""

    def __init__(self, cmd: list[str], cwd: Path, env: Mapping[str, str]):
        self.token = uuid.uuid4().hex
        self._needle = f"{TOKEN_VAR}={self.token}".encode() + b"\0"
        self.known: dict[int, int] = {}  # pid -> start time
        # Our children from before this file (other work of the caller): never adopted.
        self._foreign = children_of(os.getpid())
        full_env = dict(env)
        full_env[TOKEN_VAR] = self.token
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pgid = self.proc.pid
        self.leftover_names: list[str] = []  # the sandbox's init names them; here, no names

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def record_descendants(self) -> None:
        """Remember every process whose parent chain leads to the file's process, or to an
        orphan of it that this (subreaper) process adopted."""
        table = {}
        for pid in _pids():
            st = _stat(pid)
            if st is not None:
                table[pid] = st
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        me = os.getpid()
        adopted = [
            pid
            for pid in children.get(me, ())
            if pid != self.proc.pid and self._foreign.get(pid) != table[pid][2]
        ]
        # Once reaped, the file's pid may be reused by a stranger: walk only what is ours.
        stack = adopted + ([self.proc.pid] if self.proc.returncode is None else [])
        while stack:
            pid = stack.pop()
            if pid in table:
                self.known.setdefault(pid, table[pid][2])
            stack.extend(children.get(pid, ()))

    def _carries_token(self, pid: int) -> bool:
        try:
            return self._needle in (PROC / str(pid) / "environ").read_bytes() + b"\0"
        except OSError:
            return False

    def survivors(self) -> list[int]:
        """Live processes of this file other than the reaped main process."""
        self.record_descendants()  # children adopted since the last poll count too
        me = os.getpid()
        found = set()
        for pid, start in self.known.items():
            st = _stat(pid)
            if st is not None and st[2] == start and st[1] not in ("Z", "X"):
                found.add(pid)
        for pid in _pids():
            if pid != me and pid not in found and alive(pid) and self._carries_token(pid):
                found.add(pid)
        if self.proc.returncode is not None:
            found.discard(self.proc.pid)
        reap(pid for pid in self.known if pid != self.proc.pid)
        return sorted(found)

    def _signal_all(self, sig: int) -> None:
        try:
            os.killpg(self.pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in self.survivors():
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def _gone(self) -> bool:
        self.proc.poll()
        return self.proc.returncode is not None and not self.survivors()

    def terminate(self, grace: float, settle: float = 10.0) -> list[int]:
        """SIGTERM everything, wait up to `grace`, SIGKILL what is left, repeat until nothing of
        this file is alive (or `settle` seconds pass). Returns pids that were still alive for
        SIGKILL, for the record."""
        self.record_descendants()
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and not self._gone():
            time.sleep(0.05)
        killed: list[int] = []
        deadline = time.monotonic() + settle
        while True:
            self.proc.poll()
            left = self.survivors()
            if self.proc.returncode is None:
                left.append(self.proc.pid)
            if not left or time.monotonic() > deadline:
                break
            killed.extend(p for p in left if p not in killed)
            self._signal_all(signal.SIGKILL)
            time.sleep(0.05)
        try:
            # Bounded: a SIGTERM to the runner (a cancelled job) arriving inside Popen's own
            # poll can leave its wait lock taken, and an unbounded wait() would then never end.
            self.proc.wait(timeout=settle)
        except subprocess.TimeoutExpired:
            pass
        return killed

    def cleanup(self, grace: float) -> list[int]:
        """After the main process ended: stop anything it left behind."""
        if not self.survivors():
            return []
        left = self.survivors()
        self.terminate(grace)
        return left


SETTLE = 1.0  # seconds a file's leftovers get to end by themselves before they count
# What bwrap (and the layers helper) run with outside the sandbox: none of the tests'
# environment, which an install step may have set (LD_PRELOAD in a root process is an escape).
OUTSIDE_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}


class SandboxedTree:
    """A file's process in the sandbox, with the interface of `proctree.ProcessTree`."""

    def __init__(self, argv: Callable[[int, int], list[str]], env: Mapping[str, str]):
        """`argv(status_fd, env_fd)`: the sandbox's init reads the tests' environment from
        `env_fd` (an unlinked file) and reports through `status_fd`."""
        read, write = os.pipe()
        with tempfile.TemporaryFile() as held:
            held.write(json.dumps(dict(env)).encode())
            held.flush()
            env_fd = os.open(f"/proc/self/fd/{held.fileno()}", os.O_RDONLY)
        try:
            self.proc = subprocess.Popen(
                argv(write, env_fd),
                env=OUTSIDE_ENV,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(write, env_fd),
            )
        finally:
            os.close(write)
            os.close(env_fd)
        self._read: int | None = read
        self._status: dict | None = None
        self.leftover_names: list[str] = []

    def record_descendants(self) -> None:
        """Nothing to record: the namespace holds every process of the file."""

    def status(self) -> dict | None:
        """The init's report (exit status, leftovers), once bwrap has exited."""
        if self._status is None and self.proc.poll() is not None and self._read is not None:
            os.set_blocking(self._read, False)
            try:
                data = os.read(self._read, 65536)
            except OSError:
                data = b""
            os.close(self._read)
            self._read = None
            try:
                self._status = json.loads(data.decode(errors="replace").splitlines()[0])
            except (ValueError, IndexError):
                self._status = {}
        return self._status or None

    @property
    def returncode(self) -> int | None:
        st = self.status()
        code = st.get("exit") if st else None
        return code if isinstance(code, int) else self.proc.returncode

    def _init_pid(self) -> int | None:
        children = children_of(self.proc.pid)
        return min(children) if children else None

    def terminate(self, grace: float, settle: float = 10.0) -> list[int]:
        """SIGTERM to every process (through the init), then SIGKILL to the init, which
        ends the namespace."""
        init = self._init_pid()
        if init is not None:
            _kill(init, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace + SETTLE + grace)
            return []
        except subprocess.TimeoutExpired:
            pass
        for pid in (init, self.proc.pid):
            if pid is not None:
                _kill(pid, signal.SIGKILL)
        try:
            self.proc.wait(timeout=settle)
        except subprocess.TimeoutExpired:
            pass
        return [p for p in (init,) if p is not None]

    def cleanup(self, grace: float) -> list[str]:
        """After the file's command ended: one entry per process the init had to kill (their
        names are in `leftover_names`)."""
        self.proc.wait()
        st = self.status() or {}
        left = left if isinstance(left := st.get("left"), int) else 0
        self.leftover_names = [str(n)[:32] for n in st.get("names", []) if n][:20]
        return ["?"] * max(0, left)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
