"""sglang's CI files as each version's own scripts read them: every `_*_OVERRIDES` table, inline
suite jobs, runner labels given per job, the jobs of the first layout with stage= and
runner_config= (2026-05-13), and what is not modelled (refused by the conformance harness in one line);
anything older is refused by every command in one line naming the date. The CI files here are
written for these tests, in the shapes of sglang's history (2026-05-13 .. 2026-08-22); none is
sglang's text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ci_budget.ciprofile import sglang
from ci_budget.ciprofile.sglang_py import dispatch_rules, register_rules
from tests.sglang_tree import add_scripts, make_tree, write

REPO = Path(__file__).resolve().parents[2]
STAGE = ".github/workflows/_stage.yml"
BY_INPUT = "jobs:\n  run:\n    runs-on: ${{ inputs.runs_on }}\n"
B200 = "${{ needs.check-changes.outputs.b200_runner }}"

# 2026-05-14: overrides named after stage-a, labels passed per job, no runs_on in the yml.
MAY_PARTITIONS = """
_TARGET_BACKENDS = {HWBackend.CUDA, HWBackend.CPU}
_STAGE_A_OVERRIDES = {"stage-a-test-cpu": 4, "stage-a-test-1-gpu-small": 1}
_REUSABLE_STAGE_USES = "./.github/workflows/_stage.yml"
def load_run_timeouts(path): ...
def compute_max_parallel(size):
    return max(size // 3, 1)
"""
MAY_PR_TEST = f"""
jobs:
  stage-a-test-1-gpu-small:
    uses: ./.github/workflows/_stage.yml
    with: {{ self_name: stage-a-test-1-gpu-small, runner_config: 1-gpu-small, runs_on: 1-gpu-5090,
            run_timeout_minutes: '10' }}
  stage-c-test-deepep-8-gpu-h200:
    uses: ./.github/workflows/_stage.yml
    with: {{ self_name: stage-c-test-deepep-8-gpu-h200, runner_config: deepep-8-gpu-h200,
            runs_on: 8-gpu-h200-deepep, run_timeout_minutes: '45' }}
  stage-c-test-dsv4-4-gpu-b200:
    uses: ./.github/workflows/_stage.yml
    with: {{ self_name: stage-c-test-dsv4-4-gpu-b200, runner_config: dsv4-4-gpu-b200,
            runs_on: '{B200}', run_timeout_minutes: '45' }}
  stage-c-test-4-gpu-b200:
    uses: ./.github/workflows/_stage.yml
    with: {{ self_name: stage-c-test-4-gpu-b200, runner_config: 4-gpu-b200,
            runs_on: '{B200}', run_timeout_minutes: '30' }}
  stage-a-test-cpu:
    runs-on: ubuntu-latest
    timeout-minutes: 240
    steps: [{{ name: Run test, timeout-minutes: 10, run: python3 run_suite.py --hw cpu }}]
"""
MAY_RUNNERS = """
runner_configs:
  1-gpu-small: { install: a.sh }
  4-gpu-b200: { install: a.sh }
  deepep-8-gpu-h200: { install: b.sh }
  dsv4-4-gpu-b200: { install: c.sh }
"""


def may(**changes) -> dict:
    texts = {
        sglang.PARTITIONS: MAY_PARTITIONS,
        sglang.PR_TEST: MAY_PR_TEST,
        sglang.RUNNER_CONFIGS: MAY_RUNNERS,
        sglang.REGISTER: '_PARAM_ORDER = ("est_time", "suite")\n_KWARG_ONLY = ("stage",)\n'
        "REGISTER_MAPPING = {'register_cuda_ci': HWBackend.CUDA}\n",
        STAGE: BY_INPUT,
    }
    texts.update(changes)
    return texts


def runner_of(profile, suite):
    name = profile.settings["suite-runners"][suite]
    return name, profile.settings["runner-configs"][name]["runs-on"]


def test_every_override_table_pins_and_labels_come_from_each_job():
    profile = sglang.build(may(), {"b200_runner": "4-gpu-b200"})
    assert profile.warnings == [] and profile.unsupported == []
    assert profile.settings["suite-shards"] == {
        "stage-a-test-cpu": 4,
        "stage-a-test-1-gpu-small": 1,
    }
    assert profile.dispatched == [
        "stage-a-test-1-gpu-small", "stage-c-test-deepep-8-gpu-h200",
        "stage-c-test-dsv4-4-gpu-b200", "stage-c-test-4-gpu-b200", "stage-a-test-cpu",
    ]  # fmt: skip
    assert runner_of(profile, "stage-a-test-1-gpu-small") == ("1-gpu-small", ["1-gpu-5090"])
    assert runner_of(profile, "stage-c-test-deepep-8-gpu-h200") == (
        "deepep-8-gpu-h200", ["8-gpu-h200-deepep"])  # fmt: skip
    assert runner_of(profile, "stage-c-test-dsv4-4-gpu-b200") == ("dsv4-4-gpu-b200", ["4-gpu-b200"])
    assert runner_of(profile, "stage-a-test-cpu") == ("ubuntu-latest", ["ubuntu-latest"])
    assert profile.settings["runner-configs"]["deepep-8-gpu-h200"]["gpus"] == 8
    assert profile.settings["suite-timeouts"]["stage-a-test-cpu"] == 10  # its Run test step
    assert profile.settings["registration-keywords"] == ["stage"]


def test_one_runner_config_on_two_labels_gives_the_second_suite_its_own():
    text = MAY_PR_TEST.replace("runner_config: deepep-8-gpu-h200", "runner_config: 1-gpu-small")
    profile = sglang.build(may(**{sglang.PR_TEST: text}), {"b200_runner": "4-gpu-b200"})
    assert runner_of(profile, "stage-a-test-1-gpu-small") == ("1-gpu-small", ["1-gpu-5090"])
    assert runner_of(profile, "stage-c-test-deepep-8-gpu-h200") == (
        "8-gpu-h200-deepep", ["8-gpu-h200-deepep"])  # fmt: skip


def test_a_suite_whose_label_nothing_names_is_a_warning():
    text = MAY_PR_TEST.replace("runs_on: 1-gpu-5090,", "")
    profile = sglang.build(may(**{sglang.PR_TEST: text}), {"b200_runner": "4-gpu-b200"})
    assert profile.warnings == [
        ".github/workflows/pr-test.yml: suite stage-a-test-1-gpu-small: no runner label for it "
        "in the checkout's CI files; ci-budget's built-in runner table guesses one"
    ]
    no_value = sglang.build(may())  # the b200 output's value is not found in any workflow
    assert sum("guesses one" in w for w in no_value.warnings) == 2


def test_an_inline_suite_job_is_dispatched_with_its_run_test_budget():
    partitions = MAY_PARTITIONS.replace(
        '_STAGE_A_OVERRIDES = {"stage-a-test-cpu": 4, "stage-a-test-1-gpu-small": 1}',
        '_BASE_A_OVERRIDES = {"stage-a-test-1-gpu-small": 1}\n_INLINE_SUITE_JOBS = {"stage-a-test-cpu"}',
    )
    profile = sglang.build(may(**{sglang.PARTITIONS: partitions}), {"b200_runner": "4-gpu-b200"})
    assert "stage-a-test-cpu" in profile.dispatched
    assert profile.settings["suite-shards"] == {"stage-a-test-1-gpu-small": 1}  # sized, not pinned
    assert profile.settings["suite-timeouts"]["stage-a-test-cpu"] == 10
    assert runner_of(profile, "stage-a-test-cpu") == ("ubuntu-latest", ["ubuntu-latest"])
    assert profile.settings["github"]["gating-labels"]["run-ci"] == profile.dispatched


OLDEST_PARTITIONS = """
_TARGET_BACKENDS = {HWBackend.CUDA, HWBackend.CPU}
_STAGE_A_OVERRIDES = {"stage-a-test-cpu": 4}
TARGET_SECONDS = 20 * 60
def compute_max_parallel(size):
    return max(size // 4, 1)
"""
OLDEST_PR_TEST = f"""
jobs:
  stage-b-test-1-gpu-large:
    runs-on: 1-gpu-h100
    timeout-minutes: 240
    strategy: {{ matrix: {{ partition: "${{{{ fromJson(needs.check-changes.outputs.partitions)['stage-b-test-1-gpu-large'].arr }}}}" }} }}
  stage-c-test-4-gpu-b200:
    runs-on: {B200}
    strategy: {{ matrix: {{ partition: "${{{{ fromJson(needs.check-changes.outputs.partitions)['stage-c-test-4-gpu-b200'].arr }}}}" }} }}
  pr-test-finish:
    runs-on: ubuntu-latest
"""


OLDEST_REGISTER = (
    '_PARAM_ORDER = ("est_time", "suite")\n_KWARG_ONLY = ("stage", "runner_config")\n'
    "REGISTER_MAPPING = {'register_cuda_ci': HWBackend.CUDA}\n"
)


def test_the_first_stage_layout_gets_its_jobs_and_says_what_it_does_not_model():
    """sglang 22d3f3996 (2026-05-13): registrations take stage= and runner_config=, shards are
    still sized by TARGET_SECONDS and no stage workflow is reused yet."""
    texts = {sglang.PARTITIONS: OLDEST_PARTITIONS, sglang.PR_TEST: OLDEST_PR_TEST,
             sglang.REGISTER: OLDEST_REGISTER}  # fmt: skip
    profile = sglang.build(texts, {"b200_runner": "4-gpu-b200"})
    assert profile.dispatched == ["stage-b-test-1-gpu-large", "stage-c-test-4-gpu-b200",
                                  "stage-a-test-cpu"]  # fmt: skip
    assert runner_of(profile, "stage-b-test-1-gpu-large") == ("1-gpu-h100", ["1-gpu-h100"])
    assert runner_of(profile, "stage-c-test-4-gpu-b200") == ("4-gpu-b200", ["4-gpu-b200"])
    assert profile.unsupported == [
        f"{sglang.PARTITIONS}: shards are sized by a fixed per-shard target (TARGET_SECONDS = "
        "20 * 60), not by pr-test.yml's run_timeout_minutes",
        f"{sglang.PARTITIONS}: max_parallel is size // 4, not size // 3",
    ]
    assert profile.settings["registration-keywords"] == ["stage", "runner_config"]
    assert (
        sum(w.endswith("ci-budget sizes those shards its own way") for w in profile.warnings) == 2
    )


def test_readers_return_none_only_without_the_core_facts():
    assert dispatch_rules("def (") is None
    assert dispatch_rules("_REUSABLE_STAGE_USES = 'x'") is None  # no target backends
    rules = dispatch_rules("_TARGET_BACKENDS = {HWBackend.CUDA}")
    assert (rules["stage_uses"], rules["inline"], rules["pinned"], rules["throttle"]) == (
        [],
        [],
        {},
        None,
    )
    assert register_rules("_KWARG_ONLY = ()") is None  # no positional order


def _conformance(root):
    """The conformance harness, run as docs/dev/sglang-conformance.md says."""
    return subprocess.run([sys.executable, "-m", "tests.conformance.harness", str(root)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)  # fmt: skip


def test_conformance_refuses_an_unmodelled_layout_in_one_line(tmp_path):
    root = make_tree(tmp_path)
    write(root, sglang.PARTITIONS, OLDEST_PARTITIONS)
    done = _conformance(root)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"conformance: {root}: this version of sglang's CI is not supported: "
        f"{sglang.PARTITIONS}: shards are sized by a fixed per-shard target (TARGET_SECONDS = "
        f"20 * 60), not by pr-test.yml's run_timeout_minutes; {sglang.PARTITIONS}: max_parallel "
        "is size // 4, not size // 3"
    ]
    (root / sglang.PARTITIONS).unlink()
    done = _conformance(root)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"conformance: {root}: this version of sglang's CI is not supported: "
        "sglang's CI from before 2026-05-13 (registrations without stage= and runner_config=)"
    ]


BEFORE = (
    "sglang's CI from before 2026-05-13 (registrations without stage= and runner_config=) is not "
    'supported; profile = "none" in ci-budget.toml skips reading it'
)


def _scan(root):
    return subprocess.run([sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(root)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_layout_from_before_stage_and_runner_config_is_refused_in_one_line(tmp_path):
    """ci_register.py without keyword-only arguments (sglang 9a32a0272 and older), or no
    compute_partitions.py beside it (older still): every command refuses, exit 2."""
    root = make_tree(tmp_path)
    kwargs = '_KWARG_ONLY = ("stage", "runner_config")\n'
    register = (root / sglang.REGISTER).read_text()
    assert kwargs in register and _scan(root).returncode == 0
    (root / sglang.REGISTER).write_text(register.replace(kwargs, ""))
    no_keywords = _scan(root)
    (root / sglang.REGISTER).write_text(register)
    (root / sglang.PARTITIONS).unlink()
    no_partitions = _scan(root)
    for done in (no_keywords, no_partitions):
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.splitlines() == [f"ci-budget scan: {root}: {BEFORE}"]
    (root / "ci-budget.toml").write_text('profile = "none"\n')
    assert _scan(root).returncode == 0


def test_conformance_reports_a_failing_script_in_one_line(tmp_path):
    root = add_scripts(make_tree(tmp_path, {
        "test/registered/a.py": 'register_cuda_ci(30, stage="base-b", runner_config="1-gpu-large")',
    }))  # fmt: skip
    path = root / sglang.PARTITIONS
    path.write_text(path.read_text().replace(
        "    groups = {}", "    raise RuntimeError('Suite x: needs 5 shards\\nbut has 4')\n    groups = {}"))  # fmt: skip
    done = _conformance(root)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"conformance: sglang's CI scripts fail on this checkout (in {sglang.PARTITIONS}"
        f":{_line(path, 'raise RuntimeError')}): RuntimeError: Suite x: needs 5 shards"
    ]


def _line(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)
