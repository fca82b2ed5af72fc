"""The scheduled watch recipe (examples/adoption/watch/ci-budget-watch.yml) end to end, in the
action harness against the GitHub stand-in: the first night opens ONE tracking issue, the next
edits it in place (same number, new body), and an issue someone else opened with the same marker
and label is left alone.

The checkout is a small sglang-shaped repository whose commits touch a test file's import, an
image and unrelated files; the second checkout (`sgl-project/sglang-ci-stats`) is a local
repository of run files whose head_shas are those commits, their jobs shaped as a real run
file's (tests/fixtures/cistats).
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
from ghstandin.state import Issue
from gitrepo import commit, git

from tests.action.test_action_e2e import explain, project, runner_temp  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "adoption" / "watch" / "ci-budget-watch.yml"
REAL = ROOT / "tests" / "fixtures" / "cistats" / "runs"
ACTION = "ci-budget/ci-budget"
STATS = "sgl-project/sglang-ci-stats"
SUITE = "base-b-test-1-gpu-large"
SLOW = "test/registered/test_slow.py"
MARKER = "<!-- ci-budget:watch -->"
TEST = (
    "from pkg.core import work\n\n\ndef register_cuda_ci(*args, **kwargs):\n    return None\n\n\n"
    'register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")\n'
)


def _origin(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".github" / "workflows").mkdir(parents=True)
    shutil.copy2(RECIPE, repo / ".github" / "workflows" / RECIPE.name)
    (repo / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = 10\n")
    base = {"python/pkg/__init__.py": "", "python/pkg/core.py": "def work():\n    return 1\n"}
    shas = [commit(repo, "start", {**base, SLOW: TEST.format(est=100), "README.md": "0\n"})]
    shas += [commit(repo, f"readme {i}", {"README.md": f"{i}\n"}) for i in range(1, 5)]
    commit(repo, "make work slower", {"python/pkg/core.py": "def work():\n    return 2\n"})
    commit(repo, "bump the image", {"docker/Dockerfile": "FROM x\n"})
    shas += [commit(repo, f"later {i}", {"README.md": f"later {i}\n"}) for i in range(4)]
    return repo, shas


def _run_file(i: int, sha: str, elapsed: float) -> tuple[str, dict]:
    data = copy.deepcopy(json.loads(next(REAL.glob("*.json")).read_text()))
    day, hour = 10 + i // 2, 11 if i % 2 == 0 else 23
    start = f"2026-06-{day:02d}T{hour:02d}:00:00Z"
    job = data["jobs"][0]
    job.update(job_id=5000 + i, suite=SUITE, name=f"{SUITE} (0)", started_at=start,
               completed_at=f"2026-06-{day:02d}T{hour:02d}:0{6 if i < 5 else 9}:00Z",
               timings=[{"file": SLOW, "elapsed": elapsed}])  # fmt: skip
    data.update(run_id=1000 + i, started_at=start, head_sha=sha, jobs=[job])
    return f"runs/{start.replace(':', '-')}__{1000 + i}.json", data


def _stats(tmp_path: Path, shas: list[str], upto: int) -> Path:
    """The run-file repository: runs 0..upto-1; test_slow.py 200 s, 320 s from run 5 on (the
    job 6 min, then 9 min against the 10 min timeout: at risk)."""
    repo = tmp_path / "ci-stats"
    if not repo.exists():
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
    files = dict(_run_file(i, sha, 200 if i < 5 else 320) for i, sha in enumerate(shas[:upto]))
    commit(repo, f"runs up to {upto}", {rel: json.dumps(d) for rel, d in files.items()})
    return repo


def _night(tmp_path, origin, stats, standin, temp, action, run_id: str):
    return run_scheduled(
        origin / ".github" / "workflows" / RECIPE.name,
        origin,
        tmp_path / f"run-{run_id}",
        cron="41 6 * * *",
        run_id=run_id,
        repo=standin.state.repo,
        token=INSTALLATION_TOKEN,
        api_url=standin.url,
        runner_temp=temp,
        actions={ACTION: action},
        repositories={STATS: stats},
    )


def _ours(standin) -> list[Issue]:
    return [
        i
        for i in standin.state.issues.values()
        if not i.pull and i.user == BOT_LOGIN and i.body.startswith(MARKER)
    ]


@pytest.mark.slow
def test_watch_recipe_opens_one_tracking_issue_then_edits_it_in_place(
    tmp_path, github_standin, runner_temp, project
):
    origin, shas = _origin(tmp_path)
    github_standin.state.issues[1] = Issue(1, user="mallory", title="forged", pull=False,
                                           body=f"{MARKER}\nnot ours", labels=["ci-budget-watch"])  # fmt: skip
    stats = _stats(tmp_path, shas, upto=4)  # four runs, no step yet
    jobs = _night(tmp_path, origin, stats, github_standin, runner_temp, project, "7001")
    assert jobs["watch"][0].result == "success", explain(jobs)
    [issue] = _ours(github_standin)
    assert issue.labels == ["ci-budget-watch"] and "0 step change(s)" in issue.body
    first = issue.number

    _stats(tmp_path, shas, upto=len(shas))  # the next night: the step is in the runs
    jobs = _night(tmp_path, origin, stats, github_standin, runner_temp, project, "7002")
    assert jobs["watch"][0].result == "success", explain(jobs)
    [issue] = _ours(github_standin)
    assert issue.number == first and "1 step change(s)" in issue.body  # edited in place
    assert "make work slower" in issue.body and "`test/registered/test_slow.py`" in issue.body
    assert "1 suite(s) at risk" in issue.body and "```mermaid" in issue.body
    assert github_standin.state.issues[1].body == f"{MARKER}\nnot ours"
    assert len([i for i in github_standin.state.issues.values() if not i.pull]) == 2
    assert github_standin.invalid == []
