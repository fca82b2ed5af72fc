"""A tiny sglang-shaped checkout, written from scratch: CI files with the shapes ci-budget reads
(runner configs, a PR workflow calling reusable stage workflows, the dispatch script's constants,
the registry's argument lists) and a few registered tests. Not sglang's code."""

from __future__ import annotations

import textwrap
from pathlib import Path

RUNNER_CONFIGS = """\
runner_configs:
  1-gpu-large: { install: setup.sh, runs_on: 1-gpu-h100 }
  2-gpu-large: { install: setup.sh, runs_on: 2-gpu-h100 }
  4-gpu-b200:  { install: setup.sh, runs_on: $b200_runner }
  4-gpu-gb300: { install: setup.sh, runs_on: 4-gpu-gb300 }
  deepep-4-gpu-b200: { install: deepep.sh, runs_on: $b200_runner }
"""

CHANGES = """\
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - run: |
          if [[ "$KERNEL" == "true" ]]; then echo "b200_runner=b200-kernel-pool" >> $GITHUB_OUTPUT
          else echo "b200_runner=b200-pool" >> $GITHUB_OUTPUT; fi
"""

PR_TEST = """\
name: PR Test
on: pull_request
jobs:
  check-changes:
    uses: ./.github/workflows/_changes.yml
  base-a-test-cpu:
    uses: ./.github/workflows/_stage-cpu.yml
    with: { self_name: base-a-test-cpu, run_timeout_minutes: '15' }
  base-b-test-1-gpu-large:
    uses: ./.github/workflows/_stage.yml
    with: { self_name: base-b-test-1-gpu-large, runner_config: 1-gpu-large, run_timeout_minutes: '10' }
  base-b-test-2-gpu-large:
    uses: ./.github/workflows/_stage.yml
    with: { self_name: base-b-test-2-gpu-large, runner_config: 2-gpu-large, run_timeout_minutes: '20' }
  base-c-test-4-gpu-gb300:
    uses: ./.github/workflows/_stage.yml
    with: { self_name: base-c-test-4-gpu-gb300, runner_config: 4-gpu-gb300, run_timeout_minutes: '60' }
  pinned-job:
    runs-on: ubuntu-latest
    steps: [{ run: echo pinned }]
"""

# The stage's runner: the label runner_configs.yml gives its runner config (as sglang's main).
MAP = "${{ fromJson(fromJson(inputs.check_changes).runs_on_map)[inputs.runner_config] }}"
STAGE = f"jobs:\n  run:\n    runs-on: {MAP}\n    steps: [{{ run: echo }}]\n"
STAGE_CPU = "jobs:\n  run:\n    runs-on: ubuntu-latest\n    steps: [{ run: echo }]\n"

PARTITIONS = '''\
"""Dispatch facts, in the shape ci-budget reads."""
import glob
import os

_TARGET_BACKENDS = {HWBackend.CUDA, HWBackend.CPU}
_BASE_A_OVERRIDES = {"pinned-job": 1}
_REUSABLE_STAGE_USES = {"./.github/workflows/_stage.yml", "./.github/workflows/_stage-cpu.yml"}


def discover_files(root):
    files = glob.glob(os.path.join(root, "test", "registered", "**", "*.py"), recursive=True)
    extra = os.path.join(root, "python", "pkg", "kernels")
    files += glob.glob(os.path.join(extra, "tests", "**", "test_*.py"), recursive=True)
    return files


def load_run_timeouts(path):
    return {}


def compute_partitions(tests):
    return {t for t in tests if {{CPU_RULE}}}
'''

REGISTER = """\
_PARAM_ORDER = ("est_time", "suite", "nightly", "disabled")
_KWARG_ONLY = ("stage", "runner_config")
REGISTER_MAPPING = {
    "register_cpu_ci": HWBackend.CPU,
    "register_cuda_ci": HWBackend.CUDA,
    "register_amd_ci": HWBackend.AMD,
}
"""

MAIN = '\nif __name__ == "__main__":\n    print()\n'


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def make_tree(root: Path, tests: dict[str, str] | None = None, cpu_unthrottled=True) -> Path:
    rule = "t.backend == HWBackend.CPU" if cpu_unthrottled else "t"
    write(root, "scripts/ci/runner_configs.yml", RUNNER_CONFIGS)
    write(root, ".github/workflows/pr-test.yml", PR_TEST)
    write(root, ".github/workflows/_stage.yml", STAGE)
    write(root, ".github/workflows/_changes.yml", CHANGES)
    write(root, ".github/workflows/_stage-cpu.yml", STAGE_CPU)
    write(root, "scripts/ci/utils/compute_partitions.py", PARTITIONS.replace("{{CPU_RULE}}", rule))
    write(root, "python/sglang/test/ci/ci_register.py", REGISTER)
    for rel, call in (tests or {}).items():
        write(root, rel, call + MAIN)
    return root


# Working stand-ins for the three scripts the conformance harness runs, written for these tests:
# the same entry points and rules, none of sglang's text.
REGISTER_SCRIPT = """\
import ast
import enum
from dataclasses import dataclass

_PARAM_ORDER = ("est_time", "suite", "nightly", "disabled")
_KWARG_ONLY = ("stage", "runner_config")


class HWBackend(enum.Enum):
    CPU = 1
    CUDA = 2
    AMD = 3


REGISTER_MAPPING = {
    "register_cpu_ci": HWBackend.CPU,
    "register_cuda_ci": HWBackend.CUDA,
    "register_amd_ci": HWBackend.AMD,
}


@dataclass
class CIRegistry:
    backend: object
    filename: str
    est_time: float
    stage: object = None
    runner_config: object = None
    suite: object = None
    nightly: bool = False
    disabled: object = None

    @property
    def effective_suite(self):
        if self.stage is not None and self.runner_config is not None:
            return self.stage + "-test-" + self.runner_config
        return self.suite


def _one(call, filename):
    values = dict(zip(_PARAM_ORDER, [a.value for a in call.args]))
    values.update({k.arg: k.value.value for k in call.keywords})
    return CIRegistry(REGISTER_MAPPING[call.func.id], filename, float(values["est_time"]),
                      values.get("stage"), values.get("runner_config"), values.get("suite"),
                      values.get("nightly", False), values.get("disabled"))


def collect_tests(files, sanity_check=True):
    found = []
    for name in files:
        tree = ast.parse(open(name).read())
        for stmt in tree.body:
            call = getattr(stmt, "value", None)
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) in REGISTER_MAPPING:
                found.append(_one(call, name))
    return found


def auto_partition(files, rank, size, live_est=None):
    weigh = lambda f: (live_est or {}).get(f.filename, f.est_time)
    bins, loads = [[] for _ in range(size)], [0.0] * size
    for f in sorted(files, key=lambda f: (-weigh(f), f.filename)):
        i = loads.index(min(loads))
        bins[i].append(f)
        loads[i] += weigh(f)
    return bins[rank]
"""

PARTITIONS_SCRIPT = """\
import glob
import importlib.util
import math
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
_spec = importlib.util.spec_from_file_location(
    "reg", os.path.join(ROOT, "python", "sglang", "test", "ci", "ci_register.py"))
_ci_register = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ci_register)
HWBackend = _ci_register.HWBackend

_TARGET_BACKENDS = {HWBackend.CUDA, HWBackend.CPU}
_BASE_A_OVERRIDES = {"pinned-job": 1}
_REUSABLE_STAGE_USES = {"./.github/workflows/_stage.yml", "./.github/workflows/_stage-cpu.yml"}


def discover_files(repo_root):
    files = glob.glob(os.path.join(repo_root, "test", "registered", "**", "*.py"), recursive=True)
    jit = os.path.join(repo_root, "python", "sglang", "jit_kernel")
    return files + glob.glob(os.path.join(jit, "tests", "**", "test_*.py"), recursive=True)


def load_run_timeouts(path):
    jobs = yaml.safe_load(open(path))["jobs"]
    return {j["with"]["self_name"]: int(j["with"]["run_timeout_minutes"])
            for j in jobs.values() if j.get("uses") in _REUSABLE_STAGE_USES}


def compute_partitions(tests, repo_root, run_timeouts, partition_model=None, full_parallel=False):
    groups = {}
    for t in tests:
        suite = t.effective_suite
        wanted = suite in run_timeouts or suite in _BASE_A_OVERRIDES
        if t.backend in _TARGET_BACKENDS and not t.nightly and t.disabled is None and wanted:
            groups.setdefault(suite, []).append(t)
    out = {}
    for suite, group in groups.items():
        if suite in _BASE_A_OVERRIDES:
            size = parallel = _BASE_A_OVERRIDES[suite]
        else:
            total = sum(t.est_time for t in group)
            size = max(1, math.ceil(total / (0.75 * run_timeouts[suite] * 60)))
            cpu = all(t.backend == HWBackend.CPU for t in group)
            parallel = size if cpu else max(size // 3, 1)
        out[suite] = {"size": size, "arr": list(range(size)), "max_parallel": parallel}
    return out
"""

RUN_SUITE_SCRIPT = """\
import tabulate

from sglang.test.ci.ci_register import HWBackend, auto_partition, collect_tests
from sglang.test.ci.ci_utils import run_unittest_files

HW_MAPPING = {"cpu": HWBackend.CPU, "cuda": HWBackend.CUDA, "amd": HWBackend.AMD}


def filter_tests(tests, hw, suite, nightly=False):
    mine = [t for t in tests if t.backend == hw and t.effective_suite == suite
            and t.nightly == nightly]
    return [t for t in mine if t.disabled is None], [t for t in mine if t.disabled is not None]


def main():
    import argparse, glob, json, os, sys

    p = argparse.ArgumentParser()
    p.add_argument("--hw", required=True)
    p.add_argument("--suite", required=True)
    p.add_argument("--nightly", action="store_true")
    p.add_argument("--auto-partition-id", type=int)
    p.add_argument("--auto-partition-size", type=int)
    p.add_argument("--timeout-per-file", type=int, default=1200)
    p.add_argument("--partition-model-file")
    p.add_argument("--continue-on-error", action="store_true")
    args = p.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = glob.glob(os.path.join(root, "test", "registered", "**", "*.py"), recursive=True)
    jit = os.path.join(root, "python", "sglang", "jit_kernel")
    files += glob.glob(os.path.join(jit, "tests", "**", "test_*.py"), recursive=True)
    tests, _ = filter_tests(collect_tests(files), HW_MAPPING[args.hw], args.suite, args.nightly)
    if args.auto_partition_size:
        live = None
        if args.partition_model_file and os.path.exists(args.partition_model_file):
            est = json.load(open(args.partition_model_file)).get("est", {}).get(args.suite, {})
            live = {os.path.join(root, f): s for f, s in est.items()} or None
        tests = auto_partition(tests, args.auto_partition_id, args.auto_partition_size, live)
    sys.exit(run_unittest_files(tests, timeout_per_file=args.timeout_per_file,
                                continue_on_error=args.continue_on_error))


if __name__ == "__main__":
    main()
"""

CI_UTILS_SCRIPT = """\
import subprocess
import sys


def run_unittest_files(files, timeout_per_file=None, continue_on_error=False):
    failed = 0
    for t in files:
        if subprocess.run([sys.executable, t.filename], timeout=timeout_per_file).returncode:
            failed += 1
            if not continue_on_error:
                return 1
    return 1 if failed else 0
"""

STAGE_RUN = (
    f"jobs:\n  run:\n    runs-on: {MAP}\n    steps: [{{ run: python3 run_suite.py --hw cuda }}]\n"
)
STAGE_CPU_RUN = "jobs:\n  run:\n    runs-on: ubuntu-latest\n    steps: [{ run: python3 run_suite.py --hw cpu }]\n"


def add_scripts(root: Path) -> Path:
    """Make the tree's CI scripts runnable, for the conformance harness."""
    write(root, "python/sglang/test/ci/ci_register.py", REGISTER_SCRIPT)
    write(root, "scripts/ci/utils/compute_partitions.py", PARTITIONS_SCRIPT)
    write(root, "test/run_suite.py", RUN_SUITE_SCRIPT)
    write(root, "python/sglang/test/ci/ci_utils.py", CI_UTILS_SCRIPT)
    write(root, ".github/workflows/_stage.yml", STAGE_RUN)
    write(root, ".github/workflows/_stage-cpu.yml", STAGE_CPU_RUN)
    return root


def add_fixture(root: Path, name: str) -> Path:
    """Copy tests/fixtures/NAME's files into the tree (registered test files of a real shape)."""
    import shutil

    source = Path(__file__).resolve().parent / "fixtures" / name
    shutil.copytree(source, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.md"))
    return root
