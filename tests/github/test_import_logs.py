"""`history import` against the local GitHub stand-in: 30 days of runs with hundreds of
jobs, the request bound, a second import, an interrupted import that resumes, the signed log
redirect, and the store feeding `diff`, `history suggest` and `plan --history`."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import requests
from ghstandin import INSTALLATION_TOKEN, StandIn
from ghstandin.state import Job, RateWindow, WorkflowRun
from gitrepo import git
from synthlogs import Ran, job_log

from ci_budget.app.import_logs import ImportOptions, import_logs
from ci_budget.app.settings import Settings
from ci_budget.app.sink import Sink
from ci_budget.github.client import GitHubClient
from ci_budget.workspace.history_store import load_history

SUITE, SMALL = "base-b-test-1-gpu-large", "base-a-test-1-gpu-small"
R = "test/registered/x/"
FILES = {
    SUITE: [f"{R}test_{i}.py" for i in range(16)],
    SMALL: [f"{R}small_{i}.py" for i in range(4)],
}
SHARDS = {SUITE: 8, SMALL: 2}
DAYS = 30
WORKFLOW = "pr-test.yml"


def _elapsed(file: str, day: int) -> int:
    """Per-file times that vary by day; test_0 is the one a PR raises the budget of."""
    if file.endswith("test_0.py"):  # 4 of 30 days at 661 s: the nearest-rank p90 is 661
        return 661 if day % 7 == 6 else 600 + day
    return 40 + 13 * (hash(file) % 7) + day % 5


def seed_runs(standin: StandIn, today: datetime, days: int = DAYS) -> dict[str, int]:
    """One main-branch run a day: two sharded suites (2 files per shard) and two non-test jobs,
    with a retried file, a timeout, a cancelled shard, an expired log and a truncated log."""
    state = standin.state
    counts = {"runs": 0, "test_jobs": 0}
    job_id = 5_000_000
    for day in range(days):
        created = today - timedelta(days=days - day, hours=-2)
        run_id = 9_000_000 + day
        sha = f"{day:040x}"
        state.runs[run_id] = WorkflowRun(run_id, WORKFLOW, created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                         head_sha=sha)  # fmt: skip
        counts["runs"] += 1
        for name in ("check-changes", "pr-test-finish"):
            job_id += 1
            state.jobs[job_id] = Job(job_id, run_id, name, log="2026-01-01T00:00:00.0000000Z ok\n",
                                     runner_name="GitHub Actions 1", labels=["ubuntu-latest"])  # fmt: skip
        for suite, size in SHARDS.items():
            for index in range(size):
                job_id += 1
                files = FILES[suite][index * 2 : index * 2 + 2]
                ran = [Ran(f, _elapsed(f, day)) for f in files]
                if day == 3 and index == 1:
                    ran[0] = Ran(ran[0].file, 1800, passed=False, timed_out=True)
                if day == 4 and index == 2:
                    ran[1] = Ran(ran[1].file, ran[1].elapsed, retried=True)
                kw = {"cut_in_block": True} if (day == 6 and index == 3) else {}
                log = job_log(created, suite, ran, index, size, **kw)
                done = (created + timedelta(minutes=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
                job = Job(job_id, run_id, f"{suite} / {suite} ({index})", log=log,
                          runner_name=f"h100-{index}", completed_at=done)  # fmt: skip
                if day == 5 and index == 0:
                    job.conclusion = "cancelled"
                if day == 7 and index == 4:
                    job.log = None  # expired: the API answers 410
                state.jobs[job_id] = job
                counts["test_jobs"] += 1
    # a run on another branch and one still in progress: neither is listed
    state.runs[1] = WorkflowRun(1, WORKFLOW, today.strftime("%Y-%m-%dT%H:%M:%SZ"), branch="feature")
    state.runs[2] = WorkflowRun(2, WORKFLOW, today.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                status="in_progress", conclusion=None)  # fmt: skip
    return counts


def _options(store: Path, **kw) -> ImportOptions:
    base = dict(workflow=WORKFLOW, branch="main", jobs=["*-test-* (*)"], store=store)
    return ImportOptions(**{**base, **kw})


def _client(standin: StandIn) -> GitHubClient:
    return GitHubClient(standin.state.repo, INSTALLATION_TOKEN, standin.url, sleep=lambda s: None)


def _import(standin, store, **kw) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    settings = Settings(environ={})
    sink = Sink(settings, stdout=out, stderr=err)
    code = import_logs(settings, _options(store, **kw), sink, client=_client(standin))
    return code, out.getvalue(), err.getvalue()


def _api_calls(standin: StandIn, since: int = 0) -> list[dict]:
    return [c for c in standin.calls()[since:] if c["op"] != "logs/download"]


def _standin(days: int):
    today = datetime.now(timezone.utc).replace(microsecond=0)
    with StandIn() as standin:
        counts = seed_runs(standin, today, days)
        yield standin, counts
    assert not standin.invalid, "requests GitHub would reject:\n" + "\n".join(standin.invalid)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """30 days imported once; tests copy the store before changing it."""
    for standin, counts in _standin(DAYS):
        store = tmp_path_factory.mktemp("import") / "h.json"
        code, out, err = _import(standin, store)
        yield standin, counts, store, (code, out, err)


@pytest.fixture
def six_days():
    yield from _standin(6)


def test_import_builds_the_store_within_the_request_bound(imported):
    standin, counts, store, (code, out, err) = imported
    assert code == 0, err
    calls = _api_calls(standin)
    by_op = {op: [c for c in calls if c["op"] == op] for op in {c["op"] for c in calls}}
    logs = by_op["actions/download-job-logs-for-workflow-run"]
    runs, jobs = counts["runs"], counts["test_jobs"]
    assert len(logs) == jobs  # non-test jobs are filtered out by name: no download
    assert len(by_op["actions/list-workflow-runs"]) == -(-runs // 100)
    assert len(by_op["actions/list-jobs-for-workflow-run"]) == runs  # one page each
    assert len(calls) <= jobs + -(-runs // 100) + runs
    keys = [(c["path"], tuple(sorted(c["query"].items()))) for c in calls]
    assert len(keys) == len(set(keys)), "a request was repeated"
    downloads = standin.calls("logs/download")
    assert len(downloads) == jobs - 1 and all(c["status"] == 200 for c in downloads)  # one 410
    first = by_op["actions/list-workflow-runs"][0]["query"]
    assert (
        first["branch"] == "main" and first["status"] == "completed" and first["per_page"] == "100"
    )
    assert first["created"].startswith(">=")
    history = load_history(store)
    stats = history.stats(f"{R}test_0.py", SUITE)
    assert stats.n == 30 and stats.p90 == 661
    sample = history.samples(f"{R}test_0.py", SUITE)[-1]
    assert sample.partition == "0/8" and sample.host == "h100-0" and sample.commit == f"{29:040x}"
    assert history.stats(f"{R}test_2.py", SUITE).timeouts == 1  # day 3, shard 1
    # one clear line per job problem, naming the job; the rest is imported
    assert "line" in err and "not closed" in err and "(3)'" in err  # the truncated log
    assert "cancelled; its TIMINGS block is kept" in err
    assert "(4)': log gone (GitHub answered 410)" in err
    assert f"{jobs - 1} log(s) read" in out


def test_second_import_adds_nothing_and_costs_one_request(imported, tmp_path):
    standin, _, first, _ = imported
    store = tmp_path / "h.json"
    shutil.copy(first, store)
    before = load_history(store).to_store().series
    start = len(standin.calls())
    code, out, err = _import(standin, store)
    assert code == 0, err
    calls = standin.calls()[start:]
    # the run list's ETag answers 304 Not Modified (free of quota): nothing else is asked
    assert [(c["op"], c["status"]) for c in calls] == [("actions/list-workflow-runs", 304)]
    assert "0 new sample(s)" in out and "no new runs" in err
    assert load_history(store).to_store().series == before
    # without the ETag (say a new run landed), done runs are still not read again
    data = json.loads(store.read_text())
    next(iter(data["imports"].values()))["etag"] = None
    store.write_text(json.dumps(data))
    start = len(standin.calls())
    assert _import(standin, store)[0] == 0
    assert [c["op"] for c in standin.calls()[start:]] == ["actions/list-workflow-runs"]


def test_interrupted_import_resumes_where_it_stopped(six_days, tmp_path):
    standin, counts = six_days
    store = tmp_path / "h.json"
    op = "actions/download-job-logs-for-workflow-run"
    k = counts["test_jobs"] // 2 + 3  # in the middle of a run
    far = int(time.time()) + 3600  # beyond the client's wait cap: the import must stop
    standin.fail_after(op, k, lambda: standin.primary_rate_limit(op, far))
    code, out, err = _import(standin, store)
    assert code == 1 and "rate limit" in err and "run the same command again" in err
    half = load_history(store)
    assert 0 < sum(len(half.samples(*key)) for key in half.keys())
    start = len(standin.calls())
    code, out, err = _import(standin, store)
    assert code == 0, err
    resumed = [c for c in standin.calls()[start:] if c["op"] == op]
    first = [c for c in standin.calls()[:start] if c["op"] == op and c["status"] in (302, 410)]
    refused = [c for c in standin.calls()[:start] if c["op"] == op and c["status"] == 403]
    assert len(first) == k and len(refused) == 1
    assert len(first) + len(resumed) == counts["test_jobs"]  # the refused one is asked again
    done = {c["path"] for c in first}
    assert not done & {c["path"] for c in resumed}, "a log was downloaded twice"
    assert load_history(store).stats(f"{R}test_0.py", SUITE).n == 6


def test_cli_stops_cleanly_on_a_low_rate_limit_and_logs_never_see_the_token(six_days, tmp_path):
    standin, counts = six_days
    standin.state.rate = RateWindow(limit=1000, remaining=80, reset=int(time.time()) + 900)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_API_URL=standin.url, GITHUB_REPOSITORY=standin.state.repo,
               GITHUB_TOKEN=INSTALLATION_TOKEN)  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "history", "import", "--workflow", WORKFLOW,
         "--branch", "main", "--job", "*-test-* (*)", "--history", str(tmp_path / "h.json")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "stopped: 50 API request(s) left until" in proc.stderr
    assert "run the same command again to resume" in proc.stderr
    assert standin.state.rate.remaining == 50
    assert INSTALLATION_TOKEN not in proc.stdout + proc.stderr
    # a credential sent to the log host is recorded as invalid (the fixture checks none was)
    downloads = standin.calls("logs/download")
    assert downloads and all(c["status"] == 200 for c in downloads)


def _registered(repo: Path, est: dict[str, int]) -> None:
    for file in FILES[SUITE]:
        path = repo / file
        path.parent.mkdir(parents=True, exist_ok=True)
        stage, runner = "base-b", "1-gpu-large"
        path.write_text(
            f'register_cuda_ci(est_time={est.get(file, 300)}, stage="{stage}", '
            f'runner_config="{runner}")\n\n\nif __name__ == "__main__":\n    main()\n'
        )


@pytest.mark.slow
def test_the_store_feeds_report_suggest_and_plan_on_the_first_pr(imported, tmp_path):
    _, _, store, (code, _, err) = imported
    assert code == 0, err
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = 20\n")
    _registered(repo, {f"{R}test_0.py": 600})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    _registered(repo, {f"{R}test_0.py": 790})  # the first PR raises a budget
    git(repo, "commit", "-q", "-am", "raise")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ci_budget.cli", *args, "--root", str(repo)],
                              capture_output=True, text=True, env=env, cwd=repo, timeout=120)  # fmt: skip

    report = cli("diff", "--base", base, "--history", str(store), "--format", "markdown")
    assert report.returncode == 0, report.stderr
    assert "790s budget, p90 measured 661s over the last 30 passing run(s)" in report.stdout
    suggest = cli("history", "suggest", "--history", str(store))
    assert suggest.returncode == 0, suggest.stderr
    assert f"{R}test_1.py" in suggest.stdout  # measured under 150 s against a budget of 300 s
    plain = cli("plan", "--suite", SUITE, "--format", "json")
    measured = cli("plan", "--suite", SUITE, "--format", "json", "--history", str(store))
    assert plain.returncode == measured.returncode == 0, measured.stderr
    shards = [len(json.loads(p.stdout)["matrix"]) for p in (plain, measured)]
    # shards hold 900 s (0.75 x 20 min): est_time says 5,290 s, the measured p90s under 2,500 s
    assert shards[0] == 6 and shards[1] <= 3


def test_standin_actions_answers_match_githubs_schemas(six_days):
    from ghstandin.spec import SERVER, _openapi
    from openapi_core.testing import MockRequest, MockResponse

    standin, _ = six_days
    auth = {"Authorization": f"token {INSTALLATION_TOKEN}"}
    repo = f"/repos/{standin.state.repo}/actions"
    run_id = 9_000_000  # the first day's run
    job_id = min(j.id for j in standin.state.jobs.values() if j.run_id == run_id)
    cases = [
        (
            f"{repo}/workflows/{WORKFLOW}/runs",
            {"branch": "main", "status": "completed", "per_page": "2"},
        ),
        (f"{repo}/runs/{run_id}/jobs", {"filter": "latest", "per_page": "100"}),
        (f"{repo}/jobs/{job_id}/logs", {}),
    ]
    for path, query in cases:
        resp = requests.get(
            f"{standin.url}{path}", params=query, headers=auth, allow_redirects=False
        )
        assert resp.status_code in (200, 302), (path, resp.text)
        request = MockRequest(SERVER, "get", path, args=query)
        response = MockResponse(resp.content, status_code=resp.status_code,
                                content_type="application/json", headers=dict(resp.headers))  # fmt: skip
        _openapi().validate_response(request, response)  # raises on a shape GitHub would not send
    assert (
        'rel="next"'
        in requests.get(f"{standin.url}{cases[0][0]}", params=cases[0][1], headers=auth).headers[
            "Link"
        ]
    )
    location = resp.headers["Location"]
    assert location.startswith("http://localhost:") and "urlSignature=" in location
    assert requests.get(location).text.startswith(standin.state.jobs[job_id].log[:40])
    forged = requests.get(location.replace("urlSignature=", "urlSignature=0"))
    assert forged.status_code == 403
