"""The weekly est_time recipe (examples/adoption/est-time/ci-budget-est-time.yml) end to end, in
the action harness against the GitHub stand-in: the first week pushes ci-budget/est-time to
the origin and opens ONE pull request; the next week, with more runs measured, force-pushes the
branch and updates the same pull request: no second one.

The second checkout (`sgl-project/sglang-ci-stats`) is a local repository of run files shaped
as a real one (tests/fixtures/cistats).
"""

# ruff: noqa: F811 - the fixtures `project` and `runner_temp` are imported, then requested
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from actionrunner import run_scheduled
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN
from gitrepo import commit, git

from tests.action.test_action_e2e import explain, project, runner_temp  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "adoption" / "est-time" / "ci-budget-est-time.yml"
REAL = ROOT / "tests" / "fixtures" / "cistats" / "runs"
ACTION = "ci-budget/ci-budget"
STATS = "sgl-project/sglang-ci-stats"
BRANCH = "ci-budget/est-time"
SUITE = "base-b-test-1-gpu-large"
STUB = "def register_cuda_ci(*args, **kwargs):\n    return None\n\n\n"
FILES = {
    "test/registered/test_a.py": STUB + "register_cuda_ci(\n    est_time=100,\n"
    '    stage="base-b",\n    runner_config="1-gpu-large",\n)\n',
    "test/registered/test_b.py": STUB
    + 'register_cuda_ci(est_time=300, stage="base-b", runner_config="1-gpu-large")\n',
}


def _origin(tmp_path: Path) -> Path:
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".github" / "workflows").mkdir(parents=True)
    shutil.copy2(RECIPE, repo / ".github" / "workflows" / RECIPE.name)
    commit(repo, "tests", FILES)
    return repo


def _stats(tmp_path: Path, runs: int, a_seconds: int) -> Path:
    """Runs of test_a.py (`a_seconds`) and test_b.py (300 s, its est_time: no change)."""
    repo = tmp_path / "ci-stats"
    if not repo.exists():
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
    template = json.loads(next(REAL.glob("*.json")).read_text())
    files = {}
    for i in range(runs):
        data = copy.deepcopy(template)
        job = {**data["jobs"][0], "job_id": 9000 + i, "suite": SUITE, "name": f"{SUITE} (0)"}
        job["timings"] = [{"file": "test/registered/test_a.py", "elapsed": a_seconds},
                          {"file": "test/registered/test_b.py", "elapsed": 300}]  # fmt: skip
        data.update(run_id=3000 + i, jobs=[job], started_at=f"2026-06-{10 + i:02d}T11:00:00Z")
        files[f"runs/run-{i}.json"] = json.dumps(data)
    commit(repo, f"{runs} runs", files)
    return repo


def _week(tmp_path, origin, stats, standin, temp, action, run_id: str):
    return run_scheduled(
        origin / ".github" / "workflows" / RECIPE.name,
        origin,
        tmp_path / f"run-{run_id}",
        cron="23 5 * * 1",
        run_id=run_id,
        repo=standin.state.repo,
        token=INSTALLATION_TOKEN,
        api_url=standin.url,
        runner_temp=temp,
        actions={ACTION: action},
        repositories={STATS: stats},
    )


@pytest.mark.slow
def test_est_time_recipe_opens_one_pull_request_then_updates_it(
    tmp_path, github_standin, runner_temp, project
):
    origin = _origin(tmp_path)
    stats = _stats(tmp_path, runs=3, a_seconds=400)
    jobs = _week(tmp_path, origin, stats, github_standin, runner_temp, project, "8001")
    assert jobs["est-time"][0].result == "success", explain(jobs)
    [pr] = [i for i in github_standin.state.issues.values() if i.pull]
    assert (pr.head_ref, pr.base_ref, pr.user) == (BRANCH, "main", BOT_LOGIN)
    assert "| 100 | 400 |" in pr.body and "test_b.py" not in pr.body  # 300 s: already true
    assert "    est_time=400,\n" in git(origin, "show", f"{BRANCH}:test/registered/test_a.py")
    assert "est_time=100" in git(origin, "show", "main:test/registered/test_a.py")

    _stats(tmp_path, runs=6, a_seconds=700)  # a week later: slower still
    jobs = _week(tmp_path, origin, stats, github_standin, runner_temp, project, "8002")
    assert jobs["est-time"][0].result == "success", explain(jobs)
    [again] = [i for i in github_standin.state.issues.values() if i.pull]
    assert again.number == pr.number and "| 100 | 700 |" in again.body  # updated, not a second
    assert "    est_time=700,\n" in git(origin, "show", f"{BRANCH}:test/registered/test_a.py")
    assert github_standin.invalid == []
