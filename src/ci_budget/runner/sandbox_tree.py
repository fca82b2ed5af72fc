"""A test file's process inside the sandbox, watched and ended as `proctree.ProcessTree` is: the
namespace's init (`sandbox_init.py`) reports the command's exit status and what it had to kill
through a pipe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable, Mapping

from ci_budget.runner.proctree import children_of

SETTLE = 1.0  # seconds a file's leftovers get to end by themselves before they count


class SandboxedTree:
    """A file's process in the sandbox, with the interface of `proctree.ProcessTree`."""

    def __init__(self, argv: Callable[[int], list[str]], env: Mapping[str, str]):
        read, write = os.pipe()
        try:
            self.proc = subprocess.Popen(
                argv(write),
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(write,),
            )
        finally:
            os.close(write)
        self._read, self._status = read, None
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
        left = st.get("left") if isinstance(st.get("left"), int) else 0
        self.leftover_names = [str(n)[:32] for n in st.get("names", []) if n][:20]
        return ["?"] * max(0, left)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
