"""Selection as sglang's run_suite.py does it: backend, nightly, disabled, duplicates, est_time=0,
and `run --dry-run --format json`. Synthetic registrations; the CLI case builds a tiny tree."""

import glob
import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from helpers import registry

from ci_budget.config import Config, parse_config
from ci_budget.registry.parse import scan_source
from ci_budget.sharding.dispatch import PlanNumbers
from ci_budget.sharding.select import SelectionError, lpt, select_jobs

S = "base-b-test-2-gpu-large"
reg = partial(registry.reg, suite=S)


def paths(selection):
    return [j.path for j in selection.jobs]


def test_nightly_registrations_run_only_with_nightly():
    regs = [reg("a.py", 10), reg("n.py", 99, nightly=True)]
    assert paths(select_jobs(regs, [S])) == ["a.py"]
    assert paths(select_jobs(regs, [S], nightly=True)) == ["n.py"]


def test_two_backends_on_one_suite_need_backend():
    regs = [reg("a.py", 10), reg("amd.py", 50, backend="amd")]
    with pytest.raises(
        SelectionError, match="registered by amd and cuda: give --backend amd or --backend cuda"
    ):
        select_jobs(regs, [S])
    assert paths(select_jobs(regs, [S], backend="cuda")) == ["a.py"]
    assert [j.backend for j in select_jobs(regs, [S], backend="amd").jobs] == ["amd"]
    with pytest.raises(SelectionError, match="has no npu registrations"):
        select_jobs(regs, [S], backend="npu")


def test_single_backend_is_the_default():
    sel = select_jobs([reg("c.py", 5, suite="base-a-test-cpu", backend="cpu")], ["base-a-test-cpu"])
    assert [(j.path, j.backend) for j in sel.jobs] == [("c.py", "cpu")]


def test_disabled_listed_as_skipped_with_reason():
    sel = select_jobs([reg("a.py", 10), reg("off.py", 20, disabled="flaky on H200")], [S])
    assert paths(sel) == ["a.py"]
    assert [(s.path, s.reason) for s in sel.skipped] == [("off.py", "flaky on H200")]


def test_duplicate_registration_in_one_suite_runs_twice_and_shards_like_lpt():
    regs = [reg("a.py", 300), reg("dup.py", 200, line=1), reg("dup.py", 200, line=2),
            reg("b.py", 100), reg("z.py", 0)]  # fmt: skip
    assert paths(select_jobs(regs, [S])) == ["a.py", "dup.py", "dup.py", "b.py", "z.py"]
    expected = lpt([(r.file, r.est_time) for r in regs], 2)
    got = [paths(select_jobs(regs, [S], partition=(i, 2))) for i in range(2)]
    assert got == expected == [["a.py", "b.py", "z.py"], ["dup.py", "dup.py"]]


def test_a_file_registered_for_two_backends_weighs_its_registration_for_the_backend_that_runs(
    tmp_path,
):
    """sglang's shape of May 2026 (tests/fixtures/sglang_two_backends): one file registered
    for CUDA (150 s) and AMD (300 s) in a 2-GPU suite. `run --partition --backend cuda` splits
    by the CUDA registration, as run_suite.py --hw cuda does; by the AMD one's 300 s all three
    shards would hold other files."""
    import shutil

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "sglang_two_backends"
    shutil.copytree(fixture / "test", tmp_path / "test")
    suite = "base-b-test-2-gpu-large"
    cmd = [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(tmp_path), "--suite",
           suite, "--backend", "cuda", "--dry-run", "--format", "json", "--partition"]  # fmt: skip
    got = []
    for i in range(3):
        done = subprocess.run([*cmd, f"{i}/3"], capture_output=True, text=True, check=True)
        got.append(
            [(Path(f["path"]).name, f["est_time"]) for f in json.loads(done.stdout)["files"]]
        )
    assert [[name for name, _ in shard] for shard in got] == [
        ["test_a.py", "test_f.py", "test_hicache_storage_3fs_backend.py"],
        ["test_b.py", "test_e.py"],
        ["test_c.py", "test_d.py", "test_g.py"],
    ]
    assert ("test_hicache_storage_3fs_backend.py", 150.0) in got[0]
    # in-process, with the planner's own weights: the same split, and the AMD side its own
    files = sorted((tmp_path / "test").rglob("*.py"))
    regs = [r for f in files
            for r in scan_source(f.read_text(), str(f.relative_to(tmp_path)), Config()).registrations]  # fmt: skip
    weights = PlanNumbers().weights(regs)
    cuda = [paths(select_jobs(regs, [suite], partition=(i, 3), weights=weights, backend="cuda"))
            for i in range(3)]  # fmt: skip
    assert [[Path(p).name for p in shard] for shard in cuda] == [[n for n, _ in s] for s in got]
    amd = select_jobs(regs, [suite], weights=weights, backend="amd").jobs
    assert [(Path(j.path).name, j.est_time) for j in amd] == [
        ("test_hicache_storage_3fs_backend.py", 300.0)
    ]


def test_weights_from_a_model_reorder_and_resplit():
    regs = [reg("a.py", 300), reg("b.py", 200), reg("c.py", 100)]
    weights = {("c.py", S): 1000.0}
    assert [paths(select_jobs(regs, [S], partition=(i, 2), weights=weights)) for i in range(2)] == [
        ["c.py"],
        ["a.py", "b.py"],
    ]


def test_est_time_zero_is_a_warning_not_an_error():
    scan = scan_source('register_cpu_ci(0, "base-a-test-cpu")\nif __name__ == "__main__":\n    f()\n',
                       "t.py", Config())  # fmt: skip
    assert scan.errors == [] and [r.est_time for r in scan.registrations] == [0.0]
    assert [w.message for w in scan.warnings] == [
        "register_cpu_ci(): est_time is 0: the file counts for nothing in its suite's budget "
        "and shard sizes"
    ]


def test_keyword_arguments_follow_the_configured_list():
    src = 'register_cuda_ci(5, "s", in_process_group="g")\nif __name__ == "__main__":\n    f()\n'
    assert scan_source(src, "t.py", Config()).errors == []
    strict = parse_config({"registration-keywords": ["stage", "runner_config"]}, "x.toml")
    assert [e.message for e in scan_source(src, "t.py", strict).errors] == [
        "register_cuda_ci(): unknown argument 'in_process_group'"
    ]


def test_cli_dry_run_json(tmp_path):
    reg_dir = tmp_path / "test" / "registered"
    reg_dir.mkdir(parents=True)
    main = '\nif __name__ == "__main__":\n    print()\n'
    files = {
        "test_a.py": 'register_cuda_ci(est_time=30, stage="base-b", runner_config="2-gpu-large")',
        "test_amd.py": 'register_amd_ci(est_time=70, stage="base-b", runner_config="2-gpu-large")',
        "test_off.py": 'register_cuda_ci(10, "base-b-test-2-gpu-large", disabled="needs B200")',
        "test_n.py": 'register_cuda_ci(40, "base-b-test-2-gpu-large", nightly=True)',
        "test_zero.py": 'register_cuda_ci(0, "base-b-test-2-gpu-large")',
    }
    for name, text in files.items():
        (reg_dir / name).write_text(text + main)
    cmd = [sys.executable, "-m", "ci_budget.cli", "run", "--root", str(tmp_path),
           "--suite", S, "--backend", "cuda", "--dry-run", "--format", "json"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    # Not sharded: in the order the directory listing gives them, as run_suite.py runs them.
    found = [Path(p).name for p in glob.glob(str(reg_dir / "**" / "*.py"), recursive=True)]
    listed = sorted(["test_a.py", "test_zero.py"], key=found.index)
    est = {"test_a.py": 30.0, "test_zero.py": 0.0}
    assert json.loads(done.stdout) == {
        "files": [
            {"path": f"test/registered/{name}", "est_time": est[name], "suite": S,
             "backend": "cuda", "timeout": 1200.0}
            for name in listed
        ],
        "skipped": [
            {"path": "test/registered/test_off.py", "est_time": 10.0, "suite": S,
             "backend": "cuda", "reason": "needs B200"},
        ],
    }  # fmt: skip
    assert "registry error" not in done.stderr
    cmd.remove("--backend"), cmd.remove("cuda")
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 2 and "registered by amd and cuda" in done.stderr
