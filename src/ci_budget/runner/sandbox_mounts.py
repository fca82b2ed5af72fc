"""What the tests' sandbox shows of the machine: the mount plan, as bubblewrap arguments.

Everything is read-only. Replaced by an empty read-only directory: the runner's own places
(its install directory, work directory, RUNNER_TEMP, tool cache), ci-budget's code and venv,
/run (daemon sockets). Replaced by the run's scratch folders: /tmp, /var/tmp and $HOME. Shown
again on top: the checkout (writable, its .git read-only), the tests' interpreter and the
paths the workflow exposes. Mounts apply shallowest first, so a path shown inside a hidden one
is mounted after it.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# Accelerators and their fabrics: NVIDIA (and MIG capabilities, IMEX channels), DRM render
# nodes, AMD KFD, compute accelerators, InfiniBand/RDMA, GPUDirect RDMA, AWS Neuron.
GPU_DEVICES = ("nvidia*", "dri", "kfd", "accel", "infiniband", "gdrdrv", "neuron*")
RUNNER_EXES = ("Runner.Worker", "Runner.Listener")
_RANK = {"tmpfs": 0, "ro-bind": 1, "bind": 1, "dev-bind": 1}


@dataclass(frozen=True)
class Mount:
    kind: str  # tmpfs | ro-bind | bind | dev-bind
    dest: str
    src: str | None = None

    def args(self) -> list[str]:
        if self.kind == "tmpfs":
            return ["--tmpfs", self.dest]
        return [f"--{self.kind}", self.src or self.dest, self.dest]


def _real(path: str | os.PathLike | None) -> str | None:
    if not path:
        return None
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    return real if real != "/" and os.path.isdir(real) else None


def inside(path: str, top: str) -> bool:
    """`path` is `top` or below it."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def runner_root(proc: Path = Path("/proc")) -> str | None:
    """The Actions runner's install directory (.credentials, _diag, bin/Runner.Worker): found
    from the executable of ci-budget's ancestor process Runner.Worker."""
    pid = os.getpid()
    for _ in range(64):
        try:
            exe = os.readlink(proc / str(pid) / "exe")
            stat_line = (proc / str(pid) / "stat").read_bytes()
        except OSError:
            return None
        if os.path.basename(exe) in RUNNER_EXES:
            return _real(Path(exe).parent.parent)
        pid = int(stat_line[stat_line.rfind(b")") + 2 :].split()[1])
        if pid <= 1:
            return None
    return None


def runner_paths(env: Mapping[str, str]) -> list[str]:
    """The runner's own directories: hidden from the tests. The work directory holds every
    checkout, _actions (the downloaded actions), _temp (the file commands) and _tool."""
    found = [runner_root()]
    workspace = env.get("RUNNER_WORKSPACE")
    if workspace:
        found.append(_real(Path(workspace).parent))
    for name in ("RUNNER_TEMP", "RUNNER_TOOL_CACHE", "AGENT_TOOLSDIRECTORY", "GITHUB_ACTION_PATH"):
        found.append(_real(env.get(name)))
    return [p for p in found if p]


def interpreter_paths(python: str) -> list[str]:
    """The tests' interpreter's venv and base prefix, read from disk (never run outside)."""
    exe = Path(python)
    found = [_real(exe.resolve().parent.parent)]
    cfg = exe.parent.parent / "pyvenv.cfg"
    try:
        lines = cfg.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            found += [_real(exe.parent.parent), _real(Path(value.strip()).parent)]
    return [p for p in found if p]


def checkout_of(root: Path) -> str:
    """The git top level holding `root` (the whole checkout: an editable install of the
    repository's package lives there), else `root` itself."""
    top = Path(os.path.realpath(root))
    for candidate in (top, *top.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(top)


def gpu_devices(dev: str = "/dev") -> list[str]:
    found: list[str] = []
    for pattern in GPU_DEVICES:
        found += sorted(glob.glob(os.path.join(dev, pattern)))
    return found


def device_groups(devices: Iterable[str]) -> list[int]:
    """Groups owning device nodes that others may not open (render, video): what an
    unprivileged sandbox user needs, and nothing more; never root's group."""
    gids = set()
    for top in devices:
        nodes = [top] + (
            [os.path.join(top, n) for n in os.listdir(top)] if os.path.isdir(top) else []
        )
        for node in nodes:
            try:
                st = os.stat(node)
            except OSError:
                continue
            if stat.S_ISCHR(st.st_mode) and st.st_mode & 0o006 != 0o006 and st.st_gid != 0:
                gids.add(st.st_gid)
    return sorted(gids)


def parse_expose(spec: str) -> Mount:
    """PATH (read-only) or PATH:rw; a path under /dev is a device bind."""
    path, rw = (spec[:-3], True) if spec.endswith(":rw") else (spec.removesuffix(":ro"), False)
    real = os.path.realpath(os.path.expanduser(path))
    kind = "dev-bind" if inside(real, "/dev") else "bind" if rw else "ro-bind"
    return Mount(kind, real, real)


@dataclass
class View:
    """Inputs of one mount plan; `plan()` is pure given them."""

    hide: list[str]
    expose: list[Mount]
    checkout: str
    scratch: Mapping[str, str]  # tmp, home, out, lib -> folder
    home: str | None  # the runner user's $HOME, replaced by scratch["home"]
    devices: list[str]
    searchable: bool = True  # the sandbox user may pass through every directory the runner can
    pinned: list[str] = field(default_factory=list)  # ci-budget's outputs: read-only if shown

    def _pins(self) -> list[Mount]:
        """ci-budget's results file and artifacts folder, when they lie in the writable
        checkout, and the folders on the way to them: read-only, so the tests cannot put a
        symlink where ci-budget writes next (a write anywhere the runner user can)."""
        found: dict[str, Mount] = {}
        for path in self.pinned:
            real = os.path.realpath(path)
            if (
                not inside(real, self.checkout)
                or real == self.checkout
                or not os.path.lexists(real)
            ):
                continue
            rel = os.path.relpath(real, self.checkout).split(os.sep)
            for i in range(1, len(rel) + 1):
                step = os.path.join(self.checkout, *rel[:i])
                found[step] = Mount("ro-bind", step, step)
        return list(found.values())

    def plan(self) -> list[Mount]:
        """The mounts, in the order they apply."""
        shown = [m.dest for m in self.expose] + [self.checkout]
        masks = {"/run"} | {h for h in self.hide if not any(inside(h, s) for s in shown)}
        if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
            masks.add("/var/run")
        mounts = [Mount("tmpfs", m) for m in masks]
        resolv = os.path.realpath("/etc/resolv.conf")
        if inside(resolv, "/run") and resolv != "/run":  # systemd-resolved's stub file: DNS
            mounts.append(Mount("ro-bind", os.path.dirname(resolv), os.path.dirname(resolv)))
        s = self.scratch
        mounts += [Mount("bind", "/tmp", s["tmp"]), Mount("bind", "/var/tmp", s["tmp"])]
        home = self.home or s["home"]
        mounts.append(Mount("bind", home, s["home"]))
        mounts += [Mount("dev-bind", d, d) for d in self.devices]
        mounts += list(self.expose)
        mounts.append(Mount("bind", self.checkout, self.checkout))
        git = os.path.join(self.checkout, ".git")
        if os.path.lexists(git):
            mounts.append(Mount("ro-bind", git, git))
        mounts += self._pins()
        mounts += [Mount("bind", s["out"], s["out"]), Mount("ro-bind", s["lib"], s["lib"])]
        if not self.searchable:
            mounts += [Mount("tmpfs", d) for d in self._unsearchable(mounts)]
        return _dedupe(sorted(mounts, key=lambda m: (m.dest.count("/"), _RANK[m.kind])))

    def _unsearchable(self, mounts: list[Mount]) -> list[str]:
        """Host directories on the way to a mount that others may not enter (/root is 0700):
        hidden behind an empty tmpfs, so the unprivileged sandbox user reaches what is shown
        inside them, and nothing else there (which it could not read anyway)."""
        found: set[str] = set()
        for m in mounts:
            parts = m.dest.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                top = "/" + "/".join(parts[:i])
                if any(inside(top, o.dest) for o in mounts if o is not m) or top in found:
                    break
                try:
                    if not os.stat(top).st_mode & stat.S_IXOTH:
                        found.add(top)
                        break
                except OSError:
                    break
        return sorted(found)


def _dedupe(mounts: list[Mount]) -> list[Mount]:
    """One mount per destination (the last wins); a tmpfs inside another tmpfs is dropped."""
    last = {m.dest: m for m in mounts}
    out: list[Mount] = []
    for m in mounts:
        if last[m.dest] is not m:
            continue
        if m.kind == "tmpfs" and any(
            o.kind == "tmpfs" and o.dest != m.dest and inside(m.dest, o.dest) for o in out
        ):
            continue
        out.append(m)
    return out


def mount_args(mounts: list[Mount]) -> list[str]:
    """bwrap arguments. A mount inside an earlier one gets the folders on its way made open
    (0755; bwrap would make them 0700, closed to an unprivileged sandbox user). Each tmpfs is
    made read-only last (the mounts inside it need their mount points made first)."""
    args: list[str] = []
    for i, m in enumerate(mounts):
        parts = m.dest.strip("/").split("/")[:-1]
        for j in range(1, len(parts) + 1):
            top = "/" + "/".join(parts[:j])
            if any(inside(top, o.dest) and top != o.dest for o in mounts[:i]):
                args += ["--perms", "0755", "--dir", top]
        args += m.args()
    for m in mounts:
        if m.kind == "tmpfs":
            args += ["--remount-ro", m.dest]
    return args
