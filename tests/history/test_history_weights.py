"""With --history, shards are planned on measured p90s instead of est_time (plan and run)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.cli import cli
from helpers.registry import reg
from helpers.sharding import shard_count

from ci_budget.config import Config
from ci_budget.history.model import History
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.workspace.files import save_history

SUITE = "base-b-test-1-gpu-large"
TEST = """\
def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")


def test_ok():
    assert True


if __name__ == "__main__":
    main()
"""


def _history(path: Path, measured: dict[str, float]) -> Path:
    history = History()
    for i in range(3):
        history.add_results(
            RunResults(
                meta=RunMeta(suites=[SUITE], commit=f"{i:040x}"),
                files=[
                    FileResult(path=f, suite=SUITE, elapsed=s, status="passed")
                    for f, s in measured.items()
                ],
            )
        )
    save_history(path, history)
    return path


def test_shard_count_follows_measured_time():
    config = Config(stage_timeouts={"base-b": 10})  # 600 s; shards fit 450 s
    regs = [reg("a.py", 100), reg("b.py", 100)]
    assert shard_count(regs, config) == 1
    assert shard_count(regs, config, {("a.py", SUITE): 400, ("b.py", SUITE): 400}) == 2


def _repo(tmp_path: Path) -> Path:
    for name, est in (("a", 100), ("b", 10), ("c", 10)):
        path = tmp_path / "test" / "registered" / f"test_{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEST.format(est=est))
    return tmp_path


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return cli(*args, "--root", str(root), cwd=root, timeout=120)


@pytest.mark.slow  # real `run`s
def test_run_partition_uses_the_history(tmp_path):
    root = _repo(tmp_path)
    r = "test/registered/"
    store = _history(
        tmp_path / "h.json", {r + "test_a.py": 5, r + "test_b.py": 90, r + "test_c.py": 10}
    )

    def shard0(*extra: str) -> list[str]:
        out = tmp_path / "r.json"
        proc = _cli(root, "run", "--suite", SUITE, "--partition", "0/2", "--out", str(out), *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return [f["path"] for f in json.loads(out.read_text())["files"]]

    assert shard0() == [r + "test_a.py"]  # est_time: a (100) alone
    assert shard0("--history", str(store)) == [r + "test_b.py"]  # measured: b (90) alone


def test_run_refuses_an_unreadable_history(tmp_path):
    root = _repo(tmp_path)
    (tmp_path / "h.json").write_text("{not json")
    proc = _cli(root, "run", "--suite", SUITE, "--partition", "0/2", "--history", "h.json")
    assert proc.returncode == 2
    assert "--history: " in proc.stderr and "h.json" in proc.stderr


def test_plan_shards_on_measured_time_and_survives_a_bad_history(tmp_path):
    root = _repo(tmp_path)
    (root / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = 4\n")  # shards fit 180 s
    r = "test/registered/"
    store = _history(tmp_path / "h.json", {r + "test_a.py": 150, r + "test_b.py": 150})
    (tmp_path / "bad.json").write_text("[]")

    def plan(*extra: str) -> tuple[list[str], str]:
        proc = _cli(root, "plan", "--suite", SUITE, "--format", "json", *extra)
        assert proc.returncode == 0, proc.stderr
        return [row["partition"] for row in json.loads(proc.stdout)["matrix"]], proc.stderr

    assert plan()[0] == ["0/1"]  # est_time: 120 s in one shard
    assert plan("--history", str(store))[0] == ["0/2", "1/2"]  # measured: 310 s
    partitions, err = plan("--history", str(tmp_path / "bad.json"))
    assert partitions == ["0/1"] and "shard counts use est_time" in err


def test_plan_shows_each_shards_predicted_wall_in_text_and_json_but_not_in_the_matrix(tmp_path):
    root = _repo(tmp_path)  # est_time a 100, b 10, c 10
    (root / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = 4\n")
    r = "test/registered/"
    store = _history(tmp_path / "h.json", {r + "test_a.py": 150, r + "test_b.py": 150})
    proc = _cli(root, "plan", "--suite", SUITE, "--format", "json", "--history", str(store))
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["matrix"]
    # shard 0: a (150 s measured) + c (nothing measured: its est_time, 10 s); shard 1: b
    assert [(row["partition"], row["predicted_wall"], row["timeout_s"]) for row in rows] == [
        ("0/2", 160.0, 240.0), ("1/2", 150.0, 240.0),
    ]  # fmt: skip
    text = _cli(root, "plan", "--suite", SUITE, "--history", str(store)).stdout.splitlines()
    assert [line for line in text if "predicted wall" in line] == [
        "  predicted wall: 160s of 4 min", "  predicted wall: 150s of 4 min",
    ]  # fmt: skip
    github_output = tmp_path / "out.txt"
    github_output.touch()
    proc = cli("plan", "--suite", SUITE, "--history", str(store), "--root", str(root), cwd=root,
               env={"GITHUB_OUTPUT": str(github_output)}, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "predicted_wall" not in github_output.read_text()  # the workflow matrix is unchanged
    assert '"partition":"0/2"' in github_output.read_text()
