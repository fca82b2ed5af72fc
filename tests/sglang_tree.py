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

STAGE = "jobs:\n  run:\n    runs-on: ${{ inputs.label }}\n    steps: [{ run: echo }]\n"
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
    write(root, ".github/workflows/_stage-cpu.yml", STAGE_CPU)
    write(root, "scripts/ci/utils/compute_partitions.py", PARTITIONS.replace("{{CPU_RULE}}", rule))
    write(root, "python/sglang/test/ci/ci_register.py", REGISTER)
    for rel, call in (tests or {}).items():
        write(root, rel, call + MAIN)
    return root
