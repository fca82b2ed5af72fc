"""GitHub API calls, counted by the local stand-in (tests/ghstandin) on 127.0.0.1.

The real commands run as subprocesses: `ci-budget report --post` on PRs with N other comments
(the sticky comment there already, or not yet), and `ci-budget plan` for a `/rerun-test`
comment. Targets: upsert <= 2 calls with <= 100 comments, +1 per further 100; rerun plan <= 5;
no call repeated within one command. The baseline column shows the target.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import Row

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN, StandIn  # noqa: E402

HOOK = ROOT / "tests/fixtures/github/webhooks/issue_comment.created.on-pull-request.payload.json"
MARK = "<!-- ci-budget:run -->"
LIST = "issues/list-comments"


def _repo(root: Path, login: str | None) -> None:
    (root / ".git").mkdir(parents=True)
    test = root / "test" / "registered" / "models" / "test_a.py"
    test.parent.mkdir(parents=True)
    test.write_text(
        'register_cuda_ci(est_time=300, stage="base-b", runner_config="1-gpu-large")\n'
        'if __name__ == "__main__":\n    main()\n'
    )
    if login:
        (root / "ci-budget.toml").write_text(f'[github]\ncomment-login = "{login}"\n')
    results = {
        "schema_version": 1,
        "meta": {"suites": ["base-b-test-1-gpu-large"]},
        "files": [{"path": "test/registered/models/test_a.py", "elapsed": 120, "status": "passed"}],
    }
    (root / "r.json").write_text(json.dumps(results))


def _env(standin: StandIn, work: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(
        GITHUB_API_URL=standin.url,
        GITHUB_REPOSITORY=standin.state.repo,
        GITHUB_TOKEN=INSTALLATION_TOKEN,
        GITHUB_OUTPUT=str(work / "out.txt"),
        GITHUB_STEP_SUMMARY=str(work / "summary.md"),
        **extra,
    )
    return env


def _repeats(calls: list[dict], comments: int) -> int:
    """Calls beyond what one command needs: a second identical request, or more comment-list
    pages than the PR has."""
    lists = sum(c["op"] == LIST for c in calls)
    others = [(c["method"], c["path"]) for c in calls if c["op"] != LIST]
    pages = max(1, math.ceil(comments / 100))
    return max(0, lists - pages) + len(others) - len(set(others))


def _report(chatter: int, existing: bool, login: str | None) -> tuple[int, int, list[str]]:
    with tempfile.TemporaryDirectory(prefix="ci-budget-gh-") as tmp, StandIn() as standin:
        root = Path(tmp) / "repo"
        _repo(root, login)
        standin.add_pull(7)
        for i in range(chatter):
            standin.add_comment(7, "alice", f"chatter {i}")
        if existing:
            standin.add_comment(7, BOT_LOGIN, f"{MARK}\nold", user_type="Bot")
        comments = len(standin.comments(7))
        proc = subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(root)]
            + ["--results", str(root / "r.json"), "--post", "--pr", "7"]
            + ["--comment-mode", "always"]  # measures the sticky comment's calls: always one
            + ["--out", str(Path(tmp) / "report.md")],
            env=_env(standin, Path(tmp)),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"report --post failed: {proc.stderr}")
        ours = [c for c in standin.comments(7) if c.login == BOT_LOGIN]
        if len(ours) != 1 or standin.invalid:
            raise RuntimeError(f"sticky comment wrong: {len(ours)} comments, {standin.invalid}")
        calls = standin.calls()
        return len(calls), _repeats(calls, comments), [c["op"] for c in calls]


def _rerun_plan() -> tuple[int, int, list[str]]:
    with tempfile.TemporaryDirectory(prefix="ci-budget-gh-") as tmp, StandIn() as standin:
        work = Path(tmp)
        root = work / "repo"
        _repo(root, None)
        standin.add_pull(7, head_sha="feedface" * 5)
        standin.state.roles["alice"] = "write"
        body = "/rerun-test test/registered/models/test_a.py"
        comment_id = standin.add_comment(7, "alice", body)
        event = json.loads(HOOK.read_text())
        event["issue"]["number"] = 7
        event["comment"].update(id=comment_id, body=body)
        for who in (event["comment"]["user"], event["sender"]):
            who.update(login="alice")
        (work / "event.json").write_text(json.dumps(event))
        env = _env(
            standin,
            work,
            GITHUB_EVENT_NAME="issue_comment",
            GITHUB_EVENT_PATH=str(work / "event.json"),
            GITHUB_SHA="d" * 40,
        )
        proc = subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", "plan", "--root", str(root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0 or "should-run: true" not in proc.stdout:
            raise RuntimeError(f"plan did not run the rerun: {proc.stdout} {proc.stderr}")
        calls = standin.calls()
        return len(calls), _repeats(calls, 1), [c["op"] for c in calls]


def run(chatter: tuple[int, ...] = (0, 99, 150, 250)) -> list[Row]:
    rows = []
    cases = [(n, True, BOT_LOGIN) for n in chatter]
    cases += [(0, False, BOT_LOGIN), (0, True, None)]
    for n, existing, login in cases:
        calls, repeats, ops = _report(n, existing, login)
        comments = n + existing
        target = 2 + max(0, math.ceil(comments / 100) - 1)
        what = "update" if existing else "create"
        who = "known identity" if login else "identity looked up"
        rows.append(
            Row(
                f"api calls: report --post {what}, {comments} comments, {who}",
                target,
                calls,
                None,
                f"{' '.join(ops)}; repeated: {repeats}",
                unit=" calls",
                limit=target,
            )
        )
    calls, repeats, ops = _rerun_plan()
    rows.append(
        Row(
            "api calls: plan /rerun-test by a writer",
            5,
            calls,
            None,
            f"{' '.join(ops)}; repeated: {repeats}",
            unit=" calls",
            limit=5,
        )
    )
    return rows
