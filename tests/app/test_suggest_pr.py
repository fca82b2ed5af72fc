"""`history suggest --rule sglang --open-pr BRANCH` end to end: real git (a clone of an origin
repository), the history store filled from sglang-ci-stats-shaped run files, and the GitHub
stand-in. The first run pushes the branch and opens one pull request; the next, with more runs,
force-pushes it and edits the same pull request; a run with nothing to change touches nothing.
Registrations sglang's text match misses (a call over several lines), a file registering twice,
and disabled and nightly-only registrations are in the repository."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN
from gitrepo import git
from helpers.cli import cli

REAL = Path(__file__).parents[1] / "fixtures" / "cistats" / "runs"
BRANCH = "ci-budget/est-time"
STUB = "def register_cuda_ci(*args, **kwargs):\n    return None\n\n\n"
FILES = {
    # sglang's regex wants `register_cuda_ci(est_time=N, stage=...` on one line: this it misses
    "test/registered/test_multi_line.py": STUB + "register_cuda_ci(\n    est_time=100,\n"
    '    stage="base-b",\n    runner_config="1-gpu-large",\n)\n',
    "test/registered/test_twice.py": STUB
    + 'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large")\n'
    + 'register_cuda_ci(est_time=100, stage="base-c", runner_config="1-gpu-large")\n',
    "test/registered/test_off.py": STUB
    + 'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large", '
    'disabled="flaky")\n',
    "test/registered/test_night.py": STUB
    + 'register_cuda_ci(est_time=100, suite="nightly-1-gpu", nightly=True)\n',
}
MEASURED = {  # suite -> file -> seconds
    "base-b-test-1-gpu-large": {f: 300 for f in FILES if "night" not in f},
    "base-c-test-1-gpu-large": {"test/registered/test_twice.py": 40},
    "nightly-1-gpu": {"test/registered/test_night.py": 900},
}


def _repos(tmp_path: Path) -> Path:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    for rel, text in FILES.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "tests")
    git(work, "push", "-q", "origin", "main")
    return work


def _store(tmp_path: Path, runs: int, scale: float = 1.0) -> Path:
    template = json.loads(next(REAL.glob("*.json")).read_text())
    folder = tmp_path / f"runs-{runs}-{scale}"
    folder.mkdir()
    for i in range(runs):
        data = copy.deepcopy(template)
        job = data["jobs"][0]
        jobs = []
        for k, (suite, files) in enumerate(MEASURED.items()):
            times = [{"file": f, "elapsed": round(s * scale)} for f, s in files.items()]
            jobs.append({**job, "job_id": 100 * i + k, "suite": suite, "name": f"{suite} (0)",
                         "timings": times})  # fmt: skip
        data.update(run_id=1000 + i, jobs=jobs, started_at=f"2026-06-{10 + i:02d}T11:00:00Z")
        (folder / f"run-{i}.json").write_text(json.dumps(data))
    store = tmp_path / f"h-{runs}-{scale}.json"
    assert cli("history", "add", str(folder), "--history", str(store), cwd=tmp_path).returncode == 0
    return store


def _suggest(work: Path, store: Path, standin):
    env = {"GITHUB_REPOSITORY": standin.state.repo, "GITHUB_TOKEN": INSTALLATION_TOKEN,
           "GITHUB_API_URL": standin.url, "GITHUB_REF": "refs/heads/main",
           "CI_BUDGET_COMMENT_LOGIN": BOT_LOGIN}  # fmt: skip
    return cli("history", "suggest", "--history", str(store), "--rule", "sglang", "--open-pr",
               BRANCH, "--root", str(work), cwd=work, env=env, timeout=120)  # fmt: skip


def _pulls(standin):
    return [i for i in standin.state.issues.values() if i.pull]


def test_one_pull_request_opened_then_updated(tmp_path: Path, github_standin):
    work = _repos(tmp_path)
    proc = _suggest(work, _store(tmp_path, 3), github_standin)
    assert proc.returncode == 0, proc.stderr
    [pr] = _pulls(github_standin)
    assert (pr.head_ref, pr.base_ref, pr.user) == (BRANCH, "main", BOT_LOGIN)
    origin = tmp_path / "origin.git"
    pushed = git(origin, "show", f"{BRANCH}:test/registered/test_multi_line.py")
    assert "    est_time=300,\n" in pushed  # the literal only, where the regex finds nothing
    twice = git(origin, "show", f"{BRANCH}:test/registered/test_twice.py")
    assert 'est_time=300, stage="base-b"' in twice and 'est_time=40, stage="base-c"' in twice
    off = git(origin, "show", f"{BRANCH}:test/registered/test_off.py")
    assert "est_time=100" in off  # disabled: left alone
    assert "est_time=100" in git(origin, "show", f"{BRANCH}:test/registered/test_night.py")
    assert "`test/registered/test_multi_line.py` | 5 | `base-b-test-1-gpu-large` | 100 | 300" in (
        pr.body
    )
    assert "- `test/registered/test_twice.py`: 2 registrations" in pr.body
    [multi] = [line for line in pr.body.splitlines() if "test_multi_line.py` | 5" in line]
    assert "update_est_time.py misses it: the call is split across lines" in multi
    [twice] = [line for line in pr.body.splitlines() if "test_twice.py` | 5" in line]
    assert "misses" not in twice
    assert "disabled" in pr.body and "nightly only" in pr.body
    assert git(origin, "rev-parse", "main") == git(work, "rev-parse", "main")  # main untouched

    first_body = pr.body
    git(work, "checkout", "-q", "main")  # the next scheduled run's fresh checkout of main
    git(work, "reset", "-q", "--hard", "origin/main")
    proc = _suggest(work, _store(tmp_path, 5, scale=2.0), github_standin)
    assert proc.returncode == 0, proc.stderr
    [pr] = _pulls(github_standin)  # the same pull request, edited
    assert pr.body != first_body and "| 100 | 600 |" in pr.body
    assert "est_time=600" in git(origin, "show", f"{BRANCH}:test/registered/test_multi_line.py")
    assert github_standin.invalid == []
