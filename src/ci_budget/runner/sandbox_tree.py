"""A test file's process inside the sandbox, watched and ended as `proctree.ProcessTree` is: the
namespace's init (`sandbox_init.py`) reports the command's exit status and what it had to kill
through a pipe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping

from ci_budget.runner.proctree import children_of

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
