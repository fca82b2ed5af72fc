"""Which GPU this runner has: nvidia-smi first, else torch in the tests' interpreter.

Parsing and name/compute-capability mapping are pure helpers; `detect_gpu` runs processes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping

from ci_budget.models import GpuInfo

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
    try:
        return subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=QUERY_TIMEOUT,
            env=None if env is None else dict(env),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _from_nvidia_smi(arch_map, env) -> GpuInfo | None:
    path = (env or os.environ).get("PATH")
    exe = shutil.which("nvidia-smi", path=path)
    if exe is None:
        return None
    for query in ("name,compute_cap", "name"):  # old drivers reject compute_cap
        done = _run([exe, f"--query-gpu={query}", "--format=csv,noheader"], env)
        if done is not None and done.returncode == 0:
            return parse_nvidia_smi(done.stdout, arch_map)
    return None


def _from_torch(python: str, arch_map, env) -> GpuInfo | None:
    done = _run([python, "-c", TORCH_PROBE], env)
    if done is None or done.returncode != 0 or not done.stdout.strip():
        return None
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
        name, cc, count = str(data["name"]), str(data["cc"]), int(data["n"])
    except (ValueError, KeyError, TypeError):
        return None
    arch = cc_to_arch(cc) or arch_from_name(name, arch_map)
    return GpuInfo(name=name, compute_capability=cc, arch=arch, count=count, source="torch")


def detect_gpu(
    arch_map: Mapping[str, str],
    python: str | None = None,
    env: Mapping[str, str] | None = None,
) -> GpuInfo | None:
    """The runner's GPUs, or None. `python` is the tests' interpreter, used when there is no
    nvidia-smi (torch lives there, not in ci-budget's environment)."""
    info = _from_nvidia_smi(arch_map, env)
    if info is None and python:
        info = _from_torch(python, arch_map, env)
    return info
