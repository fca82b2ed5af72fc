"""`ci-budget conformance` on a synthetic sglang-shaped tree whose scripts are stand-ins written
for these tests: identical when the rules agree, a DIFF line and exit 1 when they do not."""

import subprocess
import sys

from tests.sglang_tree import add_scripts, make_tree

TESTS = {
    "test/registered/a.py": 'register_cuda_ci(est_time=400, stage="base-b", runner_config="1-gpu-large")',
    "test/registered/b.py": 'register_cuda_ci(est_time=300, stage="base-b", runner_config="1-gpu-large")',
    "test/registered/c.py": 'register_cuda_ci(est_time=200, stage="base-b", runner_config="1-gpu-large")',
    # Registered twice in one suite, at two budgets: sglang shards two items, 50 s and 350 s.
    "test/registered/dup.py": 'register_cuda_ci(est_time=50, stage="base-b", runner_config="1-gpu-large")\n'
    'register_cuda_ci(est_time=350, stage="base-b", runner_config="1-gpu-large")',
    "test/registered/n.py": 'register_cpu_ci(100, "base-a-test-cpu", nightly=True)',
    "test/registered/cpu.py": 'register_cpu_ci(0, "base-a-test-cpu")',
    "test/registered/cpu2.py": 'register_cpu_ci(700, "base-a-test-cpu")',
    "test/registered/amd.py": 'register_amd_ci(900, stage="base-b", runner_config="2-gpu-large")',
    "test/registered/g.py": 'register_cuda_ci(est_time=10, stage="base-c", runner_config="4-gpu-gb300")',
    "test/registered/off.py": 'register_cuda_ci(10, "base-b-test-1-gpu-large", disabled="broken")',
}  # fmt: skip


def conformance(root):
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "conformance", str(root)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_identical_on_a_tree_whose_scripts_agree(tmp_path):
    root = add_scripts(make_tree(tmp_path, TESTS))
    done = conformance(root)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "identical"
    assert lines[2].split() == ["registrations", "11", "11", "identical"]
    row = next(line for line in lines if line.startswith("base-b-test-1-gpu-large"))
    assert "3 shards, max_parallel 1, on 1-gpu-h100" in row and row.endswith(
        "identical, files in order"
    )


def test_reference_side_in_process_leaves_no_stand_ins_behind(tmp_path):
    from ci_budget.conformance.reference import reference_view

    root = add_scripts(make_tree(tmp_path, TESTS))
    view = reference_view(root)
    assert len(view.registrations) == 11
    assert view.suites["base-a-test-cpu"].shards == [
        ["test/registered/cpu2.py"],
        ["test/registered/cpu.py"],  # 700 s over 0.75 x 15 min: 2
    ]
    assert "sglang" not in sys.modules and "tabulate" not in sys.modules


def test_a_rule_that_differs_is_a_diff_and_exit_1(tmp_path):
    root = add_scripts(make_tree(tmp_path, TESTS))
    script = root / "scripts/ci/utils/compute_partitions.py"
    script.write_text(script.read_text().replace("max(size // 3, 1)", "size"))
    # the profile still reads the throttle from the comparison, so make the shard count differ
    script.write_text(script.read_text().replace("0.75 * run_timeouts", "0.5 * run_timeouts"))
    done = conformance(root)
    assert done.returncode == 1
    assert "DIFF base-b-test-1-gpu-large: size: sglang 5, ci-budget 3" in done.stdout
    assert done.stdout.splitlines()[-1].endswith("differences")


def test_missing_script_is_a_usage_error_naming_it(tmp_path):
    root = add_scripts(make_tree(tmp_path, TESTS))
    (root / "test/run_suite.py").unlink()
    done = conformance(root)
    assert done.returncode == 2 and "test/run_suite.py: missing" in done.stderr
