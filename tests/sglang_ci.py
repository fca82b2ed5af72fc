"""An sglang-shaped repository for running sglang's own workflows in the action harness: its six
PR workflows (tests/fixtures/sglang/workflows, copied verbatim, see SOURCES.md there) and,
written here from scratch, working stand-ins for the scripts those workflows call, with the
same command lines and outputs (none of sglang's text): runner_configs.py/.yml,
compute_partitions.py, run_suite.py, slash_command_handler.py (`/rerun-test` only),
update_rerun_test_status.py, the install script and the warm-up and clean-up scripts. The
stand-in handler and status script talk to GITHUB_API_URL (sglang's hard-code api.github.com).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.sglang_tree import REGISTER_SCRIPT

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "sglang" / "workflows"
WORKFLOWS = ("pr-test.yml", "_pr-test-stage.yml", "_pr-test-check-changes.yml",
             "slash-command-handler.yml", "rerun-test.yml", "pr-gate.yml")  # fmt: skip
# Every runner config a stage job of pr-test.yml names, and the suites of those jobs.
CONFIGS = {
    "1-gpu-small": "1-gpu-5090", "1-gpu-large": "1-gpu-h100", "2-gpu-large": "2-gpu-h100",
    "4-gpu-b200": "$b200_runner", "4-gpu-h100": "4-gpu-h100", "8-gpu-h200": "8-gpu-h200",
    "8-gpu-h20": "8-gpu-h20", "4-gpu-gb300": "4-gpu-gb300", "8-gpu-b300": "8-gpu-b300",
}  # fmt: skip
SUITES = {
    "base-a-test-1-gpu-small": "1-gpu-small", "base-b-test-1-gpu-small": "1-gpu-small",
    "base-b-test-1-gpu-large": "1-gpu-large", "base-b-test-2-gpu-large": "2-gpu-large",
    "base-b-test-4-gpu-b200": "4-gpu-b200", "base-c-test-4-gpu-h100": "4-gpu-h100",
    "base-c-test-8-gpu-h200": "8-gpu-h200", "base-c-test-8-gpu-h20": "8-gpu-h20",
    "base-c-test-4-gpu-b200": "4-gpu-b200", "base-c-test-4-gpu-gb300": "4-gpu-gb300",
    "base-c-test-8-gpu-b300": "8-gpu-b300",
}  # fmt: skip
INSTALL = "scripts/ci/cuda/ci_install_dependency.sh"
# The two called workflows of pr-test.yml that run on a PR and are not in the fixture: stand-ins
# with their inputs and outputs (no Rust extensions to build, no CPU suite in this repository).
RUST_EXT_YML = """\
on:
  workflow_call:
    inputs:
      runs_on: { type: string, required: true }
      git_ref: { type: string, default: '' }
      skip_pr_test_health_check: { type: boolean, default: false }
    outputs:
      artifact_name: { value: "${{ jobs.build.outputs.artifact_name }}" }
jobs:
  build:
    runs-on: ubuntu-latest
    outputs:
      artifact_name: ''
    steps:
      - run: echo "no Rust extensions in this repository"
"""
STAGE_CPU_YML = """\
on:
  workflow_call:
    inputs:
      self_name: { type: string, required: true }
      check_changes: { type: string, required: true }
      caller_inputs: { type: string, required: true }
      partitions: { type: string, required: true }
      run_timeout_minutes: { type: string, required: true }
      rust_ext_artifact: { type: string, default: '' }
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - run: echo "no CPU suite in this repository"
"""

RUNNER_CONFIGS_YML = "runner_configs:\n" + "".join(
    f"  {name}: {{ install: {INSTALL}, artifact_version: v4, install_timeout: '20', "
    f"runs_on: {label} }}\n"
    for name, label in CONFIGS.items()
)

RUNNER_CONFIGS_PY = '''\
"""runner_configs.py RC: its key=value lines but runs_on; --map LABEL: runs_on_map=JSON."""
import json
import os
import sys

import yaml

TABLE = yaml.safe_load(open(os.path.join(os.path.dirname(__file__), "runner_configs.yml")))
TABLE = TABLE["runner_configs"]
if sys.argv[1] == "--map":
    labels = {k: sys.argv[2] if v["runs_on"] == "$b200_runner" else v["runs_on"]
              for k, v in TABLE.items()}
    print("runs_on_map=" + json.dumps(labels, separators=(",", ":")))
else:
    print("\\n".join(f"{k}={v}" for k, v in TABLE[sys.argv[1]].items() if k != "runs_on"))
'''

PARTITIONS_PY = '''\
"""compute_partitions.py: partitions={suite: {size, arr, max_parallel}} from est_time and each
stage's run_timeout_minutes (the partition model is not read: est_time only)."""
import argparse
import glob
import importlib.util
import json
import math
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_spec = importlib.util.spec_from_file_location(
    "reg", os.path.join(ROOT, "python", "sglang", "test", "ci", "ci_register.py"))
_ci_register = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ci_register)
HWBackend = _ci_register.HWBackend

_TARGET_BACKENDS = {HWBackend.CUDA, HWBackend.CPU}
_BASE_A_OVERRIDES = {"base-a-test-1-gpu-small": 1}
_REUSABLE_STAGE_USES = {
    "./.github/workflows/_pr-test-stage.yml",
    "./.github/workflows/_pr-test-stage-cpu.yml",
}


def discover_files(repo_root):
    return glob.glob(os.path.join(repo_root, "test", "registered", "**", "*.py"), recursive=True)


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
            parallel = size if full_parallel else max(size // 3, 1)
        out[suite] = {"size": size, "arr": list(range(size)), "max_parallel": parallel}
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--full-parallel", default="false")
    parser.add_argument("--partition-model-file", default=None)
    parser.add_argument("--pr-test-yml", required=True)
    args = parser.parse_args()
    tests = _ci_register.collect_tests(discover_files(ROOT))
    found = compute_partitions(tests, ROOT, load_run_timeouts(os.path.join(ROOT, args.pr_test_yml)),
                               full_parallel=args.full_parallel == "true")
    print("partitions=" + json.dumps(found, separators=(",", ":")))
'''

RUN_SUITE_PY = '''\
"""run_suite.py: the suite's files of this shard, each `python3 FILE -f` from test/ with a
per-file timeout, stopping at the first failure unless --continue-on-error; the TIMINGS block."""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "sglang", "test", "ci"))
from ci_register import HWBackend, auto_partition, collect_tests  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--hw", required=True)
parser.add_argument("--suite", type=str, required=True)
parser.add_argument("--auto-partition-id", type=int, default=0)
parser.add_argument("--auto-partition-size", type=int, default=1)
parser.add_argument("--partition-model-file", default=None)
parser.add_argument("--timeout-per-file", type=int, default=1200, help="seconds")
parser.add_argument("--timeout-from-est-time", action="store_true")
parser.add_argument("--continue-on-error", action="store_true")
args = parser.parse_args()
files = glob.glob(os.path.join(HERE, "registered", "**", "*.py"), recursive=True)
mine = [t for t in collect_tests(files) if t.backend == HWBackend[args.hw.upper()]
        and t.effective_suite == args.suite and not t.nightly and t.disabled is None]
shard = auto_partition(mine, args.auto_partition_id, args.auto_partition_size)
elapsed, passed, failed = {}, set(), False
for t in sorted(shard, key=lambda t: t.filename):
    start = time.monotonic()
    try:
        ok = subprocess.run([sys.executable, t.filename, "-f"], cwd=HERE,
                            timeout=args.timeout_per_file).returncode == 0
    except subprocess.TimeoutExpired:
        print(f"TIMEOUT: {t.filename} after {args.timeout_per_file} seconds")
        ok = False
    elapsed[t.filename] = time.monotonic() - start
    if ok:
        passed.add(t.filename)
    failed = failed or not ok
    if not ok and not args.continue_on_error:
        break
print("========== TIMINGS BEGIN ==========")
for name, took in elapsed.items():
    print(json.dumps({"file": name, "passed": name in passed, "elapsed": round(took)}))
print("========== TIMINGS END ==========")
sys.exit(255 if failed else 0)
'''

INSTALL_SH = """\
#!/bin/bash
# The repository's install step: the checkout's package on the path of every later step (an
# editable install would do the same; nothing is downloaded here).
set -euo pipefail
echo "PYTHONPATH=$PWD/python" >>"$GITHUB_ENV"
echo "installed the package of $(git rev-parse HEAD) from $PWD/python"
"""

HANDLER_PY = """\
\"\"\"slash_command_handler.py for `/rerun-test SPEC`: a writer's comment dispatches rerun-test.yml
for the file's runner config, with one reply whose line the run updates, and a +1 reaction.\"\"\"
import os
import re
import sys

import requests
import yaml

API, REPO = os.environ["GITHUB_API_URL"], os.environ["REPO_FULL_NAME"]
S = requests.Session()
S.headers.update(Authorization=f"Bearer {os.environ['GITHUB_TOKEN']}",
                 Accept="application/vnd.github+json")


def call(method, path, **kw):
    done = S.request(method, f"{API}/repos/{REPO}/{path}", timeout=30, **kw)
    done.raise_for_status()
    return done.json() if done.content else None


comment = os.environ["COMMENT_ID"]
found = re.search(r"^\\s*/rerun-test\\s+(\\S+)", os.environ["COMMENT_BODY"], re.M)
if not found:
    sys.exit(0)
perm = call("GET", f"collaborators/{os.environ['USER_LOGIN']}/permission")["permission"]
if perm not in ("admin", "maintain", "write"):
    call("POST", f"issues/comments/{comment}/reactions", json={"content": "confused"})
    sys.exit(0)
pr = call("GET", f"pulls/{os.environ['PR_NUMBER']}")
spec = found.group(1)
config = re.search(r'runner_config="([^"]+)"', open(os.path.join("test", spec)).read()).group(1)
table = yaml.safe_load(open("scripts/ci/runner_configs.yml"))["runner_configs"][config]
runs_on = "4-gpu-b200" if table["runs_on"] == "$b200_runner" else table["runs_on"]
label = f"/rerun-test {spec}"
reply = call("POST", f"issues/{pr['number']}/comments",
             json={"body": f"\\U0001f680 Dispatching `{label}`..."})
inputs = {"mode": "cuda", "test_command": spec, "runs_on": runs_on,
          "install_script": table["install"], "install_timeout": str(table["install_timeout"]),
          "rdma_devices": "", "reply_comment_id": str(reply["id"]), "reply_marker": "<!--rrt:0-->"}
fork = (pr["head"].get("repo") or {}).get("full_name") != REPO
if fork:
    inputs["pr_head_sha"] = pr["head"]["sha"]
call("POST", "actions/workflows/rerun-test.yml/dispatches",
     json={"ref": "main" if fork else pr["head"]["ref"], "inputs": inputs})
body = (f"Results for `{label}`:\\n\\n\\U0001f680 `{runs_on}` (1 test): \\u23f3 <!--rrt:0-->\\n"
        f"```\\ncd test/ && python3 {spec}\\n```")
call("PATCH", f"issues/comments/{reply['id']}", json={"body": body})
call("POST", f"issues/comments/{comment}/reactions", json={"content": "+1"})
"""

STATUS_PY = '''\
"""update_rerun_test_status.py: the reply line with the marker, marked running/passed/failed."""
import argparse
import os

import requests

parser = argparse.ArgumentParser()
for flag in ("--comment-id", "--marker", "--status", "--repo"):
    parser.add_argument(flag, required=True)
args = parser.parse_args()
url = f"{os.environ['GITHUB_API_URL']}/repos/{args.repo}/issues/comments/{args.comment_id}"
headers = {"Authorization": f"Bearer {os.environ['GITHUB_TOKEN']}"}
body = requests.get(url, headers=headers, timeout=30).json()["body"]
mark = {"running": "\\U0001f3c3", "success": "\\u2705", "failure": "\\u274c"}[args.status]
lines = [line.replace("\\u23f3", mark).replace("\\U0001f3c3", mark) if args.marker in line
         else line for line in body.split("\\n")]
requests.patch(url, json={"body": "\\n".join(lines)}, headers=headers, timeout=30)
'''

TEST_FILE = """\
import unittest

import pkg


def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time={est}, stage="{stage}", runner_config="{config}")


class TestIt(unittest.TestCase):
    def test_it(self):
        print("testing pkg", pkg.VERSION)


if __name__ == "__main__":
    unittest.main()
"""


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def test_path(suite: str) -> str:
    """test/registered/<stage>/test_<runner config>.py"""
    stage, config = suite.split("-test-")
    return f"test/registered/{stage.replace('-', '_')}/test_{config.replace('-', '_')}.py"


def make_repo(root: Path) -> Path:
    """The default branch: sglang's workflows, the stand-in scripts, one registered file per
    stage suite of pr-test.yml (est_time 60 s, one shard each) and the package they import."""
    (root / ".github" / "workflows").mkdir(parents=True)
    for name in WORKFLOWS:
        shutil.copyfile(FIXTURE / name, root / ".github" / "workflows" / name)
    write(root, ".github/workflows/_pr-test-rust-ext-build.yml", RUST_EXT_YML)
    write(root, ".github/workflows/_pr-test-stage-cpu.yml", STAGE_CPU_YML)
    write(root, "scripts/ci/runner_configs.yml", RUNNER_CONFIGS_YML)
    write(root, "scripts/ci/runner_configs.py", RUNNER_CONFIGS_PY)
    write(root, "scripts/ci/utils/compute_partitions.py", PARTITIONS_PY)
    write(root, "scripts/ci/utils/slash_command_handler.py", HANDLER_PY)
    write(root, "scripts/ci/utils/update_rerun_test_status.py", STATUS_PY)
    write(root, INSTALL, INSTALL_SH)
    write(root, "scripts/ci/cuda/ci_cleanup_venv.sh", "#!/bin/bash\necho 'nothing to clean'\n")
    for warmup in ("warmup_deep_gemm.py", "warmup_server.py"):
        write(root, f"scripts/ci/cuda/{warmup}", "import sys\nprint('warm-up of', sys.argv[1:])\n")
    write(root, "python/sglang/test/ci/ci_register.py", REGISTER_SCRIPT)
    write(root, "test/run_suite.py", RUN_SUITE_PY)
    write(root, "python/pkg/__init__.py", 'VERSION = "main"\n')
    for suite, config in SUITES.items():
        stage = suite.split("-test-")[0]
        write(root, test_path(suite), TEST_FILE.format(est=60, stage=stage, config=config))
    return root
