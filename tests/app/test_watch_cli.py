"""`ci-budget history watch` end to end: a real git checkout whose commits touch a test file, a
module it imports, CI and an unrelated file, and sglang-ci-stats run files whose head_shas are
those commits (their jobs' shapes copied from a real run file, tests/fixtures/cistats)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from gitrepo import commit, git
from helpers.cli import cli

REAL = Path(__file__).parents[1] / "fixtures" / "cistats" / "runs"
SUITE = "base-b-test-1-gpu-large"
SLOW = "test/registered/test_slow.py"
QUIET = "test/registered/test_quiet.py"
TEST = """\
from pkg.core import work


def register_cuda_ci(*args, **kwargs):
    return None


register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")


def test_ok():
    assert work()
"""


def _repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = 10\n")
    shas = [commit(repo, "start", {
        "python/pkg/__init__.py": "", "python/pkg/core.py": "def work():\n    return 1\n",
        SLOW: TEST.format(est=100), QUIET: TEST.format(est=400), "README.md": "x\n",
    })]  # fmt: skip
    for i in range(4):
        shas.append(commit(repo, f"readme {i}", {"README.md": f"{i}\n"}))
    commit(repo, "make work slower", {"python/pkg/core.py": "def work():\n    return 2\n"})
    commit(repo, "bump the image", {"docker/Dockerfile": "FROM x\n"})
    commit(repo, "docs only", {"docs/a.md": "a\n"})
    shas.append(commit(repo, "README again", {"README.md": "y\n"}))
    for i in range(3):
        shas.append(commit(repo, f"later {i}", {"README.md": f"later {i}\n"}))
    return repo, shas


def _runs(tmp_path: Path, shas: list[str]) -> Path:
    """Nine runs, 12 hours apart: test_slow.py takes 200 s, then 320 s from the sixth run (the
    first at the commits after `make work slower`); test_quiet.py stays at 400 s."""
    template = json.loads(next(REAL.glob("*.json")).read_text())
    out = tmp_path / "runs"
    out.mkdir()
    for i, sha in enumerate(shas):
        data = copy.deepcopy(template)
        day, hour = 10 + i // 2, 11 if i % 2 == 0 else 23
        start = f"2026-06-{day:02d}T{hour:02d}:00:00Z"
        data.update(run_id=1000 + i, started_at=start, head_sha=sha)
        job = data["jobs"][0]
        job.update(job_id=5000 + i, suite=SUITE, name=f"{SUITE} ({0})", started_at=start,
                   completed_at=f"2026-06-{day:02d}T{hour:02d}:{12 if i < 5 else 14}:00Z",
                   timings=[{"file": SLOW, "elapsed": 200 if i < 5 else 320},
                            {"file": QUIET, "elapsed": 400}])  # fmt: skip
        data["jobs"] = [job]
        (out / f"{start.replace(':', '-')}__{1000 + i}.json").write_text(json.dumps(data))
    return out


def test_watch_names_the_step_its_commits_and_the_stale_est_time(tmp_path: Path):
    repo, shas = _repo(tmp_path)
    runs = _runs(tmp_path, shas)
    proc = cli("history", "watch", str(runs), "--root", str(repo), "--format", "json",
               cwd=tmp_path, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    [suite] = found["suites"]
    assert (suite["suite"], suite["timeout"], suite["runs"]) == (SUITE, 600.0, 9)
    assert suite["level"] == 840.0 and suite["headroom"] == -240.0 and suite["at_risk"]
    [step] = found["steps"]
    assert (step["file"], step["before"], step["after"]) == (SLOW, 200.0, 320.0)
    assert step["last_before"]["sha"] == shas[4] and step["first_after"]["sha"] == shas[5]
    assert step["range_commits"] == 4  # slower work, image, docs, README
    assert [(c["subject"], c["why"]) for c in step["commits"]] == [
        ("bump the image", ["ci"]), ("make work slower", ["imports"]),
    ]  # fmt: skip
    [est] = [e for e in found["estimates"] if e["file"] == SLOW]
    assert (est["verdict"], est["p90"], est["est_time"]) == ("under", 320.0, 100.0)
    quiet = [e for e in found["estimates"] if e["file"] == QUIET]
    assert quiet == []  # 400 s measured against est_time 400


def test_watch_markdown_opens_with_the_suites_at_risk_and_text_reads(tmp_path: Path):
    repo, shas = _repo(tmp_path)
    runs = _runs(tmp_path, shas)
    md = cli("history", "watch", str(runs), "--root", str(repo), "--format", "markdown",
             cwd=tmp_path, timeout=60)  # fmt: skip
    assert md.returncode == 0, md.stderr
    lines = md.stdout.splitlines()
    assert lines[0] == "<!-- ci-budget:watch -->" and "1 suite(s) at risk" in lines[1]
    assert md.stdout.index("### Suites at risk") < md.stdout.index("```mermaid")
    assert f"`{SUITE}`" in lines[7]  # the first table row, on the first screen
    text = cli("history", "watch", str(runs), "--root", str(repo), cwd=tmp_path, timeout=60)
    assert text.returncode == 0 and "AT RISK" in text.stdout
    assert "200s -> 320s (+120s)" in text.stdout and "make work slower" in text.stdout


def test_a_bad_run_file_is_one_line_and_exit_2(tmp_path: Path):
    bad = tmp_path / "run.json"
    bad.write_text(json.dumps({"run_id": 1, "jobs": [{"job_id": "x"}]}))
    proc = cli("history", "watch", str(bad), "--root", str(tmp_path), cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and "jobs[0].job_id" in proc.stderr
