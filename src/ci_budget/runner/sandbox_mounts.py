"""What the tests' sandbox shows of the machine: the mount plan, as bubblewrap arguments.

Everything is read-only. Replaced by an empty read-only directory: the runner's own places
(its install directory, work directory, RUNNER_TEMP, tool cache), ci-budget's code and venv,
/run (daemon sockets). Replaced by the run's scratch folders: /tmp, /var/tmp and $HOME. Shown
again on top: the checkout (writable, its .git read-only), the caches (`cache_paths`: writable
through a layer of the run, `sandbox_init.layers`), the tests' interpreter and the paths the
workflow exposes. Credential files under $HOME stay hidden whatever is shown (`CREDENTIALS`).
Mounts apply shallowest first, so a path shown inside a hidden one is mounted after it.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# Accelerators and their fabrics: NVIDIA (and MIG capabilities, IMEX channels), DRM render
# nodes, AMD KFD, compute accelerators, InfiniBand/RDMA, GPUDirect RDMA, AWS Neuron.
GPU_DEVICES = ("nvidia*", "dri", "kfd", "accel", "infiniband", "gdrdrv", "neuron*")
RUNNER_EXES = ("Runner.Worker", "Runner.Listener")
# The caches a GPU runner keeps, found by default: under $HOME, and the folders these name.
HOME_CACHES = (".cache", ".triton", ".nv")
CACHE_ENV = ("XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
             "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE", "TORCH_HOME", "TRITON_CACHE_DIR",
             "TORCHINDUCTOR_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUDA_CACHE_PATH",
             "MODELSCOPE_CACHE", "VLLM_CACHE_ROOT", "FLASHINFER_WORKSPACE_BASE")  # fmt: skip
# Credential files and folders under $HOME: hidden even inside a path shown to the tests.
CREDENTIALS = (".ssh", ".gnupg", ".docker", ".netrc", ".git-credentials", ".gitconfig",
               ".config/git/credentials", ".config/gh", ".config/hub", ".aws", ".azure",
               ".config/gcloud", ".kube", ".pypirc", ".npmrc", ".yarnrc", ".cargo/credentials",
               ".cargo/credentials.toml", ".m2/settings.xml", ".gradle/gradle.properties",
               ".terraform.d", ".vault-token", ".config/sops")  # fmt: skip
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


def cache_paths(env: Mapping[str, str], named: Iterable[str], hidden: Iterable[str]) -> list[str]:
    """The caches shown to the tests: $HOME's and those the job's environment or the workflow
    (`named`) name, that exist; never $HOME itself, / or a folder holding a hidden path; one
    inside another counts once."""
    home = _real(env.get("HOME"))
    wanted = [os.path.join(home, c) for c in HOME_CACHES] if home else []
    wanted += [env[k] for k in CACHE_ENV if env.get(k)] + list(named)
    found: list[str] = []
    for path in wanted:
        real = _real(os.path.expanduser(path))
        if real is None or real == home or any(inside(h, real) for h in hidden):
            continue
        if not any(inside(real, f) for f in found):
            found = [f for f in found if not inside(f, real)] + [real]
    return sorted(found)


def credential_paths(home: str | None) -> list[str]:
    """The credential files and folders of the runner user's $HOME that exist."""
    if not home:
        return []
    return [p for c in CREDENTIALS if os.path.lexists(p := os.path.join(home, c))]


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
    pinned: list[str] = field(default_factory=list)  # ci-budget's outputs: read-only if shown
    caches: list[Mount] = field(default_factory=list)  # writable through the run's layer, or not
    secrets: list[str] = field(default_factory=list)  # hidden whatever else is shown
    extra: list[Mount] = field(default_factory=list)  # last: ci-budget's own replacements

    def _secret_masks(self) -> list[Mount]:
        return [Mount("tmpfs", p) if os.path.isdir(p) and not os.path.islink(p)
                else Mount("ro-bind", p, os.path.join(self.scratch["lib"], "empty"))
                for p in self.secrets]  # fmt: skip

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
        mounts += self.caches
        mounts += [m for m in self.expose if not any(inside(m.dest, s) for s in self.secrets)]
        mounts.append(Mount("bind", self.checkout, self.checkout))
        git = os.path.join(self.checkout, ".git")
        if os.path.lexists(git):
            mounts.append(Mount("ro-bind", git, git))
        mounts += self._pins()
        mounts += [Mount("bind", s["out"], s["out"]), Mount("ro-bind", s["lib"], s["lib"])]
        mounts += self._secret_masks() + list(self.extra)
        return _dedupe(sorted(mounts, key=lambda m: (m.dest.count("/"), _RANK[m.kind])))


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
