"""PID 1 of a test file's sandbox (copied into the sandbox and run as `python -I -S FILE`).

It starts the file's command, passes SIGTERM/SIGINT/SIGHUP on to every process of the sandbox
and reaps every orphan. When the command ends it waits up to SETTLE seconds for the namespace
to go quiet (what the file left behind ending by itself); what does not is a leftover: it sends
the rest SIGTERM, waits up to GRACE, writes one JSON line to STATUS_FD and exits. Its exit ends the PID namespace: the kernel kills every process still
in it, a process forking as fast as it can included (no fork succeeds in a dying namespace).

    python -I -S sandbox_init.py STATUS_FD SETTLE GRACE [--env ENV_FD] -- COMMAND...

With `--env`, COMMAND gets the environment read (JSON) from ENV_FD: bwrap and what runs before
it outside the sandbox never hold the tests' environment.

`layers` runs before bwrap, outside the sandbox, as ci-budget's user: in a mount namespace of
its own (and, for a non-root runner, a user namespace of its uid) it mounts each cache read-only
under an overlay whose upper layer is a folder of the run, then execs bwrap, which binds the
cache from that view: the tests write into the cache as usual, the writes land in the run's
folder and go with it. Where an overlay cannot be mounted (no namespace, an upper folder on
overlayfs), that cache is bound read-only instead, never writable:

    python -I -S sandbox_init.py layers RUN_FOLDER CACHE... -- bwrap ARGS...

Standalone on purpose: the tests' interpreter runs it, with no site-packages (-S), so nothing
but the standard library and this file runs as the sandbox's PID 1.
"""

import ctypes
import json
import os
import signal
import sys
import time

PR_SET_DUMPABLE = 4
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


def _nondumpable():
    # The tests run as the same user: without this they could open /proc/1/fd/STATUS_FD.
    try:
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _others():
    """(how many exited children were reaped, names of the live processes of the namespace
    other than this one)."""
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        reaped += 1
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        state = data[data.rfind(b")") + 2 :][:1]
        if state not in (b"Z", b"X"):
            found.append(data[data.find(b"(") + 1 : data.rfind(b")")].decode(errors="replace"))
    return reaped, found


def _last_pid():
    """The last PID this namespace handed out: a fork between two looks moves it, even when
    the process that forked is gone before a look can see it."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return None


def _settle(seconds):
    """[] once the namespace is quiet (nothing running, nothing reaped, no new PID since the
    last look); else, after `seconds`, the names of what kept running."""
    deadline = time.monotonic() + seconds
    seen: list[str] = []
    last = _last_pid()
    while True:
        reaped, left = _others()
        now = _last_pid()
        if not left and not reaped and now == last:
            return []
        last, seen = now, left or seen
        if time.monotonic() >= deadline:
            return left or seen or ["?"]
        time.sleep(0.02)


def _start(cmd, env):
    pid = os.fork()
    if pid:
        return pid
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)  # Python ignores SIGPIPE; exec would keep that
    try:
        os.execvpe(cmd[0], cmd, env)
    except OSError as exc:
        os.write(2, f"ci-budget sandbox: cannot start {cmd[0]}: {exc}\n".encode())
    os._exit(127)


def _namespace(libc):
    """A private mount namespace (and, not root, a user namespace mapping our own ids)."""
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWNS | (CLONE_NEWUSER if uid else 0)) != 0:
        return False
    try:
        if uid:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                               ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
    except OSError:
        return False
    return libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0


def layers(argv):
    top, rest = argv[2], argv[3:]
    cut = rest.index("--")
    caches, cmd = rest[:cut], rest[cut + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    private = _namespace(libc)
    for n, cache in enumerate(caches):
        upper, work = f"{top}/{n}/upper", f"{top}/{n}/work"
        os.makedirs(upper, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        data = f"lowerdir={cache},upperdir={upper},workdir={work}".encode()
        if private and not set(",:") & set(cache + top):
            if libc.mount(b"overlay", cache.encode(), b"overlay", 0, data) == 0:
                continue
        os.write(2, f"ci-budget sandbox: {cache} read-only (no overlay: "
                    f"{os.strerror(ctypes.get_errno()) if private else 'no namespace'})\n".encode())  # fmt: skip
        for i in range(len(cmd) - 2):  # bwrap's --bind CACHE CACHE: read-only instead
            if cmd[i] == "--bind" and cmd[i + 1] == cmd[i + 2] == cache:
                cmd[i] = "--ro-bind"
    os.execv(cmd[0], cmd)


def main(argv):
    if argv[1] == "layers":
        return layers(argv)
    status_fd, settle, grace = int(argv[1]), float(argv[2]), float(argv[3])
    env = dict(os.environ)
    if argv[4] == "--env":
        with os.fdopen(int(argv[5]), "rb") as fh:
            env = json.loads(fh.read())
        argv = argv[:4] + argv[6:]
    cmd = argv[5:] if argv[4] == "--" else argv[4:]
    _nondumpable()
    os.set_inheritable(status_fd, False)

    def forward(signum, frame):
        try:
            os.kill(-1, signum)  # from PID 1: every other process of the namespace
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    child = _start(cmd, env)
    status = 0
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid == child:
            break
    left = _settle(settle)
    if left:
        forward(signal.SIGTERM, None)
        _settle(grace)
    code = os.waitstatus_to_exitcode(status)
    report = {"exit": code, "left": len(left), "names": sorted(set(left))[:20]}
    try:
        os.write(status_fd, (json.dumps(report) + "\n").encode())
    except OSError:
        pass
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main(sys.argv)
