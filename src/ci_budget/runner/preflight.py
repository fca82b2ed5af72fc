"""Checks before any file runs, and the probes they start.

- Every named class and test exists, and the tests' interpreter has pytest: one clear error up
  front instead of every file failing on its own.
- Which GPU this runner has: nvidia-smi first, else torch in the tests' interpreter. Parsing
  and name/compute-capability mapping are pure helpers; `detect_gpu` runs processes.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from ci_budget.models import GpuInfo
from ci_budget.sharding.select import Job

_PLAIN_BASES = {"TestCase", "unittest.TestCase", "object"}


def _methods(tree: ast.Module) -> dict[str, set[str]]:
    """Class -> its test methods, for classes that inherit none (no mixins, no test bases)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and all(
            ast.unparse(b) in _PLAIN_BASES for b in node.bases
        ):
            out[node.name] = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return out


def _top_level_names(tree: ast.Module) -> set[str] | None:
    """Names a module binds at top level, or None when that cannot be known statically (a
    star import)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def missing_selection(root: Path, job: Job) -> str | None:
    """`no class TestX in FILE` when a spec names a class (or test function) the file does not
    define: said before running, instead of pytest's exit 4 after it."""
    try:
        source = (root / job.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names, methods = _top_level_names(tree), _methods(tree)
    if names is None:
        return None
    for selector in job.selection:
        parts = [p.split("[")[0] for p in selector.removeprefix("::").split("::")]
        if parts[0] not in names:
            what = "test function" if parts[0].startswith("test") else "class"
            return f"no {what} {parts[0]} in {job.path}"
        if len(parts) > 1 and parts[0] in methods and parts[1] not in methods[parts[0]]:
            return f"no test {parts[1]} in class {parts[0]} of {job.path}"
    return None


# Found, not imported: importing pytest would cost a second interpreter's worth of start-up.
# The message is the one a failed import prints.
_PYTEST_PROBE = (
    "import importlib.util as u, sys\n"
    "u.find_spec('pytest') or sys.exit(\"ModuleNotFoundError: No module named 'pytest'\")"
)


class PytestProbe:
    """Whether `python` can run pytest, asked now and read later: the interpreter starts
    while ci-budget scans the tree."""

    def __init__(self, python: str, env=None, wrap=None):
        """`env`: the tests' environment (the interpreter's start-up runs its site-packages'
        .pth files); `wrap`: the sandbox's command prefix, when there is one."""
        cmd = [python, "-c", _PYTEST_PROBE]
        try:
            self.proc: subprocess.Popen | None = subprocess.Popen(
                wrap(cmd) if wrap else cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=None if env is None else dict(env),
            )
            self.error = None
        except OSError as exc:
            self.proc, self.error = None, str(exc)

    def stop(self) -> None:
        """Not needed after all (the run stopped first): end the probe."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def missing(self) -> str | None:
        """Why the interpreter cannot run pytest (the last line of its error), or None."""
        if self.proc is None:
            return self.error
        try:
            out, err = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired as exc:
            self.proc.kill()
            self.proc.communicate()
            return str(exc)
        if self.proc.returncode == 0:
            return None
        lines = (err or out).strip().splitlines()
        return lines[-1] if lines else f"exit {self.proc.returncode}"


QUERY_TIMEOUT = 20.0

# Printed by the torch probe as one JSON line; torch is only importable in the tests' Python.
TORCH_PROBE = (
    "import json, torch\n"
    "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
    "if n:\n"
    "    cc = torch.cuda.get_device_capability(0)\n"
    "    print(json.dumps({'name': torch.cuda.get_device_name(0), 'cc': '%d.%d' % cc, 'n': n}))\n"
)


def cc_to_arch(cc: str | None) -> str | None:
    """'9.0' -> 'sm90', '10.0' -> 'sm100', '8.6' -> 'sm86'; None when not a capability."""
    if not cc:
        return None
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", cc)
    if not m:
        return None
    return f"sm{int(m.group(1))}{int(m.group(2))}"


def arch_from_name(name: str, arch_map: Mapping[str, str]) -> str | None:
    """Longest key of `arch_map` found in `name` as whole words, case-insensitively.

    'NVIDIA H100 80GB HBM3' -> H100; 'NVIDIA GH200 480GB' -> GH200 (not H200).
    """
    best: tuple[int, str] | None = None
    for key, arch in arch_map.items():
        pattern = r"(?<![A-Za-z0-9])" + re.escape(key) + r"(?![A-Za-z0-9])"
        if re.search(pattern, name, flags=re.IGNORECASE) and (best is None or len(key) > best[0]):
            best = (len(key), arch)
    return best[1] if best else None


def parse_nvidia_smi(text: str, arch_map: Mapping[str, str]) -> GpuInfo | None:
    """Output of `--query-gpu=name[,compute_cap] --format=csv,noheader`: one line per GPU."""
    rows = [line.strip() for line in text.splitlines() if line.strip()]
    if not rows:
        return None
    fields = [f.strip() for f in rows[0].split(",")]
    name = fields[0]
    cc = fields[1] if len(fields) > 1 and cc_to_arch(fields[1]) else None
    arch = cc_to_arch(cc) or arch_from_name(name, arch_map)
    return GpuInfo(name=name, compute_capability=cc, arch=arch, count=len(rows))


def _run(cmd: list[str], env: Mapping[str, str] | None) -> subprocess.CompletedProcess | None:
    return _finish(_start(cmd, env), cmd)


def _start(cmd: list[str], env: Mapping[str, str] | None) -> subprocess.Popen | None:
    try:
        return subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=None if env is None else dict(env),
        )
    except OSError:
        return None


def _finish(proc: subprocess.Popen | None, cmd: list[str]) -> subprocess.CompletedProcess | None:
    if proc is None:
        return None
    try:
        out, err = proc.communicate(timeout=QUERY_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _smi_query(query: str) -> list[str]:
    return [f"--query-gpu={query}", "--format=csv,noheader"]


def _torch_info(done: subprocess.CompletedProcess | None, arch_map) -> GpuInfo | None:
    if done is None or done.returncode != 0 or not done.stdout.strip():
        return None
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
        name, cc, count = str(data["name"]), str(data["cc"]), int(data["n"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    arch = cc_to_arch(cc) or arch_from_name(name, arch_map)
    return GpuInfo(name=name, compute_capability=cc, arch=arch, count=count, source="torch")


class GpuProbe:
    """`detect_gpu` started now and read later, so the query (nvidia-smi can take a second on a
    multi-GPU host; the torch probe longer) runs while ci-budget does other work."""

    def __init__(
        self,
        arch_map: Mapping[str, str],
        python: str | None = None,
        env: Mapping[str, str] | None = None,
        wrap: Callable[[list[str]], list[str]] | None = None,
    ):
        """`wrap`: the tests' sandbox prefix for the torch probe, which runs the tests'
        interpreter (and so its site-packages); nvidia-smi is the driver's and runs as is."""
        self.arch_map, self.python, self.env = arch_map, python, env
        self.torch = [python, "-c", TORCH_PROBE] if python else []
        if wrap is not None and self.torch:
            self.torch = wrap(self.torch)
        self.smi = shutil.which("nvidia-smi", path=(env or os.environ).get("PATH"))
        if self.smi is not None:
            self.cmd = [self.smi, *_smi_query("name,compute_cap")]
        else:
            self.cmd = self.torch
        self.proc = _start(self.cmd, env) if self.cmd else None

    def stop(self) -> None:
        """Not needed after all (the run stopped first): end the query."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def result(self) -> GpuInfo | None:
        first = _finish(self.proc, self.cmd)
        if self.smi is None:
            return _torch_info(first, self.arch_map)
        if first is None or first.returncode != 0:  # old drivers reject compute_cap
            first = _run([self.smi, *_smi_query("name")], self.env)
        if first is not None and first.returncode == 0:
            return parse_nvidia_smi(first.stdout, self.arch_map)
        if not self.torch:
            return None
        return _torch_info(_run(self.torch, self.env), self.arch_map)


def detect_gpu(
    arch_map: Mapping[str, str],
    python: str | None = None,
    env: Mapping[str, str] | None = None,
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> GpuInfo | None:
    """The runner's GPUs, or None. `python` is the tests' interpreter, used when there is no
    nvidia-smi (torch lives there, not in ci-budget's environment)."""
    return GpuProbe(arch_map, python, env, wrap).result()
