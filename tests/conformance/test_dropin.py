"""`run` as a drop-in for sglang's run_suite.py: per-file timeouts read from the workflows the
way sglang applies them, retries, fail-fast, and its flags. The CI texts here are written for
these tests in the shapes sglang's files have (not copies)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_budget.ciprofile import sglang
from ci_budget.ciprofile.sglang_jobs import (
    file_timeouts,
    inline_timeouts,
    retry_patterns,
    run_suite_default,
    stage_job_timeouts,
)
from ci_budget.runner.outcome import RetryRules, retry_reason

RUN_SUITE = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--suite", type=str, required=True)
parser.add_argument("--timeout-per-file", type=int, default=1200, help="seconds")
parser.add_argument("--timeout-from-est-time", action="store_true")
"""
STAGE = """\
on: { workflow_call: { inputs: { timeout_per_file: { type: string, default: '' } } } }
jobs:
  run:
    runs-on: x
    steps:
      - run: |
          python3 run_suite.py --hw cuda --suite ${{ inputs.self_name }} \\
            ${{ inputs.scheduled && '--timeout-from-est-time' || '' }} \\
            ${{ inputs.timeout_per_file && format('--timeout-per-file {0}', inputs.timeout_per_file) || '' }}
"""
PR_TEST = {
    "jobs": {
        "base-b-test-1-gpu-large": {
            "uses": "./.github/workflows/_stage.yml",
            "with": {"self_name": "base-b-test-1-gpu-large", "timeout_per_file": "1800"},
        },
        "base-b-test-2-gpu-large": {
            "uses": "./.github/workflows/_stage.yml",
            "with": {"self_name": "base-b-test-2-gpu-large"},
        },
    }
}
NIGHTLY = {
    "jobs": {
        "n": {
            "uses": "./.github/workflows/_stage.yml",
            "with": {"self_name": "nightly-test-1-gpu-large", "scheduled": True},
        },
        # the same suite again, from a scheduled workflow: the per-commit value stays
        "again": {
            "uses": "./.github/workflows/_stage.yml",
            "with": {"self_name": "base-b-test-1-gpu-large", "scheduled": True},
        },
    }
}
AMD = """\
jobs:
  a:
    steps:
      - run: |
          python3 run_suite.py --hw amd --suite stage-b-test-1-gpu-small-amd \\
            --auto-partition-id ${{ matrix.part }} --timeout-per-file 2400 --enable-retry
      - run: python3 run_suite.py --hw amd --suite nightly-amd --nightly --timeout-from-est-time
      - run: python3 run_suite.py --hw cuda --suite ${{ inputs.suite }} --timeout-per-file 5
      - run: bash -c "cd test && python3 run_suite.py --hw cpu --suite arm --timeout-per-file 1500"
"""
CI_UTILS = """\
RETRIABLE_PATTERNS = [r"accuracy", r"timeout"]
INFRA_RETRIABLE_PATTERNS = [r"XPU out of memory"]
NON_RETRIABLE_PATTERNS = [r"ImportError", r"CUDA out of memory"]
"""


def test_run_suite_default_and_retry_patterns_are_read_not_run():
    assert run_suite_default(RUN_SUITE) == 1200
    assert run_suite_default("parser.add_argument('--timeout-per-file', type=int)") is None
    assert run_suite_default("def broken(:") is None
    assert retry_patterns(CI_UTILS) == {
        "infra": ["XPU out of memory"],
        "never": ["ImportError", "CUDA out of memory"],
        "retriable": ["accuracy", "timeout"],
    }
    assert retry_patterns("X = 1") is None


def test_stage_inputs_count_only_where_the_stage_passes_them_on():
    stages = {".github/workflows/_stage.yml": STAGE}
    assert stage_job_timeouts(PR_TEST, stages) == {"base-b-test-1-gpu-large": 1800.0}
    assert stage_job_timeouts(NIGHTLY, stages) == {
        "nightly-test-1-gpu-large": "est-time",
        "base-b-test-1-gpu-large": "est-time",
    }
    deaf = {".github/workflows/_stage.yml": "jobs: {run: {steps: [{run: run_suite.py}]}}"}
    assert stage_job_timeouts(PR_TEST, deaf) == {}


def test_inline_calls_with_literal_suites_and_continuation_lines():
    assert inline_timeouts(AMD) == {
        "stage-b-test-1-gpu-small-amd": 2400.0,
        "nightly-amd": "est-time",
        "arm": 1500.0,  # inside a quoted `bash -c "..."`
    }


def test_per_commit_workflow_wins_over_a_scheduled_one():
    texts = {
        ".github/workflows/pr-test.yml": "",
        ".github/workflows/nightly.yml": "",
        ".github/workflows/pr-test-amd.yml": AMD,
    }
    parsed = {".github/workflows/pr-test.yml": PR_TEST, ".github/workflows/nightly.yml": NIGHTLY}
    found = file_timeouts(parsed, texts, {".github/workflows/_stage.yml": STAGE})
    assert found["base-b-test-1-gpu-large"] == 1800.0
    assert found["nightly-test-1-gpu-large"] == "est-time"
    assert found["stage-b-test-1-gpu-small-amd"] == 2400.0
    assert "base-b-test-2-gpu-large" not in found  # run_suite.py's default: 1200


def test_profile_carries_the_timeouts_and_patterns(tmp_path):
    import yaml

    from tests.sglang_tree import make_tree

    root = make_tree(tmp_path)
    (root / "test").mkdir(exist_ok=True)
    (root / "test/run_suite.py").write_text(RUN_SUITE.replace("1200", "900"))
    (root / "python/sglang/test/ci/ci_utils.py").write_text(CI_UTILS)
    pr_test = yaml.safe_load((root / ".github/workflows/pr-test.yml").read_text())
    pr_test["jobs"]["base-b-test-1-gpu-large"]["with"]["timeout_per_file"] = "1800"
    (root / ".github/workflows/pr-test.yml").write_text(yaml.safe_dump(pr_test))
    (root / ".github/workflows/_stage.yml").write_text(STAGE)
    from ci_budget.workspace.project import load_config

    config = load_config(root)
    assert config.timeout_for(100, "base-b-test-1-gpu-large") == 1800
    assert config.timeout_for(100, "base-b-test-2-gpu-large") == 900  # the script's default
    assert config.retry_patterns.never == ["ImportError", "CUDA out of memory"]
    assert sglang.RUN_SUITE == "test/run_suite.py"


@pytest.mark.parametrize(
    ("status", "output", "retried"),
    [
        ("passed", "", False),
        ("timeout", "", True),  # a stuck server, usually
        ("failed", "AssertionError: 0.61 not greater than 0.7 (accuracy)", True),
        ("failed", "XPU out of memory ... ImportError", True),  # infra first
        ("failed", "ImportError: no module named x", False),
        ("failed", "AssertionError: 1 != 2", True),  # an AssertionError is worth one more go
        ("failed", "Traceback ... KeyError: 'x'", False),
        ("crashed", "Segmentation fault (core dumped) CUDA out of memory", False),
        ("cancelled", "accuracy", False),
    ],
)
def test_retry_reason_follows_the_patterns_in_order(status, output, retried):
    rules = RetryRules(infra=["XPU out of memory"], never=["ImportError", "CUDA out of memory"],
                       retriable=["accuracy"])  # fmt: skip
    assert (retry_reason(rules, status, output) is not None) is retried


FLAKY = """\
import os, unittest


def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")


class TestFlaky(unittest.TestCase):
    def test_once(self):
        mark = os.environ["MARK"] + "{name}"
        if {flaky} and not os.path.exists(mark):
            open(mark, "w").close()
            self.assertEqual(1, 2)


if __name__ == "__main__":
    unittest.main()
"""


def _tree(tmp_path: Path, files: dict[str, tuple[int, bool]]) -> Path:
    registered = tmp_path / "repo" / "test" / "registered"
    registered.mkdir(parents=True)
    for name, (est, flaky) in files.items():
        text = FLAKY.format(est=est, name=name, flaky=flaky)
        (registered / name).write_text(text)
    return tmp_path / "repo"


def _run(root: Path, *args: str, mark: Path) -> tuple[subprocess.CompletedProcess, dict]:
    out = root / "results.json"
    env = {**os.environ, "MARK": str(mark)}
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), "--hw", "cuda",
         "--suite", "base-b-test-1-gpu-large", "--out", str(out), *args],
        cwd=root / "test", env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done, json.loads(out.read_text())


def test_drop_in_retries_a_retriable_failure_and_keeps_the_last_attempt(tmp_path):
    root = _tree(tmp_path, {"test_flaky.py": (30, True), "test_fine.py": (10, False)})
    done, results = _run(
        root, "--auto-partition-id", "0", "--auto-partition-size", "1", "--enable-retry",
        "--retry-wait-seconds", "0", mark=tmp_path / "mark-",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    flaky, fine = results["files"]
    assert flaky["status"] == "passed" and "attempt 2 of 2" in flaky["message"]
    assert flaky["timeout"] == 1200 + 600  # run_suite.py: the retry increase on a flat limit
    assert "RETRY test/registered/test_flaky.py: AssertionError" in done.stdout
    assert results["meta"]["mode"] == "script"  # `python3 FILE -f` from test/, as sglang
    assert fine["status"] == "passed"
    assert '{"file": "test/registered/test_flaky.py", "passed": true' in done.stdout
    first, second = flaky["attempts"]
    assert (first["status"], second["status"]) == ("failed", "passed")
    assert first["reason"].startswith("AssertionError") and second["reason"] is None
    assert second["elapsed"] == flaky["elapsed"] and "attempts" not in fine or not fine["attempts"]
    # The report: flaky, not passed; the job's time on it is every attempt's.
    shown = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(root), "--results",
         str(root / "results.json"), "--format", "json"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in json.loads(shown.stdout)["lines"] if x["file"].endswith("flaky.py"))
    assert line["status"] == "flaky" and line["file_status"] == "passed"
    assert line["measured"] == pytest.approx(first["elapsed"] + second["elapsed"])
    assert [a["status"] for a in line["attempts"]] == ["failed", "passed"]
    md = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(root), "--results",
         str(root / "results.json"), "--format", "markdown"],
        cwd=root, capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    headline = "## ⚠️ ci-budget: 1 file passed only on a retry (`test_flaky.py`)"
    assert md.splitlines()[1] == headline
    assert "| 🔁 flaky |" in md and "attempt 1 failed after" in md


def test_drop_in_without_retry_stops_at_the_first_failure(tmp_path):
    root = _tree(tmp_path, {"test_flaky.py": (30, True), "test_fine.py": (10, False)})
    done, results = _run(
        root, "--auto-partition-id", "0", "--auto-partition-size", "1",
        "--timeout-from-est-time", mark=tmp_path / "mark-",
    )  # fmt: skip
    assert done.returncode == 1
    flaky, fine = results["files"]
    assert flaky["status"] == "failed" and flaky["timeout"] == 30 + 1800
    assert fine["status"] == "not-run"
    assert "test_fine.py" not in done.stdout.split("TIMINGS BEGIN")[-1]


def test_drop_in_suite_without_files_passes_as_run_suite_does(tmp_path):
    root = _tree(tmp_path, {"test_fine.py": (10, False)})
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), "--hw", "amd",
         "--suite", "base-b-test-1-gpu-large"],
        cwd=root / "test", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "No tests found for hw=amd, suite=base-b-test-1-gpu-large" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), "--backend", "amd",
         "--suite", "base-b-test-1-gpu-large"],
        cwd=root / "test", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2  # without --hw: a usage error, as before


def test_partition_flags_go_together(capsys):
    from ci_budget.cli import main

    assert main(["run", "--suite", "x", "--auto-partition-id", "1"]) == 2
    assert "--auto-partition-id and --auto-partition-size go together" in capsys.readouterr().err


SGLANG = os.environ.get("CI_BUDGET_SGLANG_CHECKOUT")


@pytest.mark.slow
@pytest.mark.skipif(not SGLANG, reason="set CI_BUDGET_SGLANG_CHECKOUT to an sglang checkout")
def test_exit_status_cases_match_a_real_run_suite(tmp_path):
    from tests.conformance.harness import dropin_exit

    for i, case in enumerate(dropin_exit.CASES):
        result = dropin_exit.run_case(Path(SGLANG), tmp_path / str(i), case)
        assert dropin_exit.agree(result) is None, (case, result)


# --- recipe 3: ci-budget's own triggers beside the repository's -------------------------------

HANDLER = """\
on:
  issue_comment:
    types: [created, edited]
jobs:
  slash_command:
    if: contains(github.event.comment.body, '/rerun-test')
"""
GATE = """\
jobs:
  pr-gate:
    steps:
      - if: ${{ contains(fromJson(steps.pr.outputs.labels), 'run-ci') == false }}
        run: exit 1
"""
OURS = "jobs:\n  plan:\n    steps:\n      - uses: ./\n        with: { command: plan }  # '/rerun-test' label 'run-ci'\n"


def test_the_repositorys_own_command_and_gate_are_detected_ours_are_not():
    texts = {"handler.yml": HANDLER, "gate.yml": GATE, "ours.yml": OURS}
    assert sglang.handles_command(texts) == ["handler.yml"]
    assert sglang.gates_on_label(texts) == ["gate.yml"]
    assert sglang.handles_command({"gate.yml": GATE}) == []


def test_sglang_profile_steps_aside_from_rerun_test_and_run_ci(tmp_path):
    from ci_budget.workspace.project import load_config
    from tests.sglang_tree import make_tree

    root = make_tree(tmp_path)
    assert load_config(root).github.command == "/rerun-test"  # nothing to collide with
    (root / ".github/workflows/slash-command-handler.yml").write_text(HANDLER)
    (root / ".github/workflows/pr-gate.yml").write_text(GATE)
    config = load_config(root)
    assert config.github.command == "/ci-budget-run"
    assert list(config.github.gating_labels) == ["ci-budget-run"]  # the same suites as run-ci
    # Instead of the repository's triggers: the settings say so, and win.
    (root / "ci-budget.toml").write_text(
        '[github]\ncommand = "/rerun-test"\ngating-labels = { run-ci = [] }\n'
    )
    config = load_config(root)
    assert config.github.command == "/rerun-test" and list(config.github.gating_labels) == [
        "run-ci"
    ]


def test_a_renamed_command_leaves_rerun_test_to_the_repository():
    from ci_budget.config import Config, GithubSettings
    from tests.trigger.test_plan import Pull, rerun

    config = Config(github=GithubSettings(command="/ci-budget-run", gating_labels={"x": []}))
    plan, needs = rerun("/rerun-test test_a.py", config=config)
    assert needs == [] and not plan.should_run and plan.reply is None  # no second bot reply
    assert plan.reason == "issue_comment: not a /ci-budget-run command"
    plan, _ = rerun("/ci-budget-run test_a.py", config=config)
    assert plan.should_run and plan.trigger == "rerun-test"
    plan, _ = rerun("/ci-budget-run test_a.py", permission="read", config=config)
    assert "\n@Codertocat `/ci-budget-run` refused:" in plan.reply
    stale = Pull(head_pushed_at="2030-01-01T00:00:00Z")  # pushed after the comment
    plan, _ = rerun("/ci-budget-run test_a.py", pull=stale, config=config)
    assert "/ci-budget-run@" in plan.reply and "/rerun-test" not in plan.reply
    # The repository's handler answers its other commands too: ci-budget says nothing to them.
    for body in ("/tag-run-ci-label", "/rerun-group core", "/tag-and-rerun-ci extra"):
        for config in (Config(), Config(github=GithubSettings(command="/ci-budget-run"))):
            plan, needs = rerun(body, config=config)
            assert needs == [] and plan.reply is None and not plan.should_run, body


# --- recipe 2's other way: an unchanged run_suite.py, its output read afterwards --------------

LOG = """\
2026-08-21T10:00:00.0000000Z python3 run_suite.py --hw cuda --suite base-b-test-1-gpu-large \\
2026-08-21T10:00:00.0000000Z   --auto-partition-id 0 --auto-partition-size 1
2026-08-21T10:00:01.0000000Z .
2026-08-21T10:00:01.0000000Z Begin (0/3): python3 {root}/test/registered/test_b.py -f
2026-08-21T10:00:42.0000000Z TIMEOUT: {root}/test/registered/test_b.py after 40 seconds
2026-08-21T10:00:43.0000000Z ========== TIMINGS BEGIN ==========
2026-08-21T10:00:43.0000000Z {{"file": "test/registered/test_a.py", "passed": true, "elapsed": 12}}
2026-08-21T10:00:43.0000000Z {{"file": "{root}/test/registered/test_b.py", "passed": false, "elapsed": 40}}
2026-08-21T10:00:43.0000000Z ========== TIMINGS END ==========
"""


def test_from_log_reads_an_unchanged_run_suite_into_the_results_file(tmp_path):
    from tests.sglang_tree import make_tree

    tests = {f"test/registered/test_{n}.py": f'register_cuda_ci(est_time={e}, stage="base-b", '
             'runner_config="1-gpu-large")' for n, e in (("a", 30), ("b", 20), ("c", 10))}  # fmt: skip
    root = make_tree(tmp_path / "sglang", tests)
    log = tmp_path / "run_suite.log"
    log.write_text(LOG.format(root=root.resolve()))
    argv = [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(root), "--hw", "cuda",
            "--suite", "base-b-test-1-gpu-large", "--auto-partition-id", "0",
            "--auto-partition-size", "1", "--from-log", str(log), "--out", "r.json"]  # fmt: skip
    done = subprocess.run(argv, cwd=root / "test", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "read 2 of 3 file(s)" in done.stdout
    files = {f["path"]: f for f in json.loads((root / "test" / "r.json").read_text())["files"]}
    a, b, c = (files[f"test/registered/test_{n}.py"] for n in "abc")
    assert (a["status"], a["elapsed"], a["est_time"]) == ("passed", 12, 30)
    assert (b["status"], b["elapsed"]) == ("timeout", 40)  # its TIMEOUT line
    assert c["status"] == "not-run" and "not in run_suite.py's TIMINGS block" in c["message"]
    assert a["timeout"] == 1200  # the limit the drop-in applies (run_suite.py's default)
    # No TIMINGS block (the job died before it): every planned file, not run; exit 1.
    log.write_text(LOG.split("2026-08-21T10:00:43")[0])
    done = subprocess.run(argv, cwd=root / "test", capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "no TIMINGS block" in done.stderr
    statuses = [f["status"] for f in json.loads((root / "test" / "r.json").read_text())["files"]]
    assert statuses == ["not-run"] * 3
