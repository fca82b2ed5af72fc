"""The conformance harness (`python -m tests.conformance.harness`) on a synthetic sglang-shaped
tree whose scripts are stand-ins written for these tests: identical when the rules agree, a DIFF
line and exit 1 when they do not."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sglang_tree import add_fixture, add_scripts, make_tree

REPO = Path(__file__).resolve().parents[2]

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
        [sys.executable, "-m", "tests.conformance.harness", str(root)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
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


def test_reference_side_lists_each_shard_through_run_suite(tmp_path):
    from tests.conformance.harness.reference import reference_view

    root = add_scripts(make_tree(tmp_path, TESTS))
    view = reference_view(root)
    assert len(view.registrations) == 11
    assert view.suites["base-a-test-cpu"].shards == [
        ["test/registered/cpu2.py"],
        ["test/registered/cpu.py"],  # 700 s over 0.75 x 15 min: 2
    ]
    assert "sglang" not in sys.modules and "tabulate" not in sys.modules


def test_a_file_registered_for_two_backends_splits_by_the_backend_that_runs(tmp_path):
    """The May 2026 shape: run_suite.py --hw cuda weighs the file by its CUDA est_time (150 s);
    weighed by its AMD one (300 s), all 3 shards of the 2-GPU suite would hold other files."""
    from tests.conformance.harness.reference import reference_view

    root = add_fixture(add_scripts(make_tree(tmp_path)), "sglang_two_backends")
    shards = reference_view(root).suites["base-b-test-2-gpu-large"].shards
    assert [[f.rsplit("/", 1)[1] for f in shard] for shard in shards] == [
        ["test_a.py", "test_f.py", "test_hicache_storage_3fs_backend.py"],
        ["test_b.py", "test_e.py"],
        ["test_c.py", "test_d.py", "test_g.py"],
    ]
    done = conformance(root)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("base-b-test-2-gpu"))
    assert "3 shards" in row and row.endswith("identical, files in order")


def test_files_run_suite_globs_outside_test_registered_are_compared(tmp_path):
    """The June 2026 shape: run_suite.py also runs python/sglang/jit_kernel/tests/**/test_*.py."""
    jit = "python/sglang/jit_kernel/tests/test_norm.py"
    tests = {**TESTS, jit: TESTS["test/registered/c.py"]}
    root = add_scripts(make_tree(tmp_path, tests))
    done = conformance(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[2].split() == ["registrations", "12", "12", "identical"]
    from tests.conformance.harness.reference import reference_view

    shards = reference_view(root).suites["base-b-test-1-gpu-large"].shards
    assert jit in [f for shard in shards for f in shard]


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
    assert len(done.stderr.splitlines()) == 1


def test_a_shard_ci_budget_run_refuses_is_one_line_naming_the_command(tmp_path):
    """The ci-budget side is `ci-budget run` itself: where it refuses a matrix row's command
    line, the harness says so (exit 2), never a silent empty shard."""
    from ci_budget.app.settings import AppError
    from tests.conformance.harness.ours import run_files

    root = add_scripts(make_tree(tmp_path, TESTS))
    argv = ["--suite", "base-b-test-2-gpu-large", "--partition", "0/1"]  # AMD only: no CUDA
    assert run_files(root, [*argv, "--backend", "cuda"]) == []
    with pytest.raises(AppError) as caught:
        run_files(root, [*argv, "--backend", "cuda"], strict=True)
    why = str(caught.value)
    assert why.startswith(f"ci-budget run {' '.join(argv)} --backend cuda: exit 2: ")
    assert "has no cuda registrations" in why
