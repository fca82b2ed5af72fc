"""`ci-budget report` end to end: real files, real subprocesses, GitHub Actions sinks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from actionrunner.runner import read_output_file

from ci_budget.models import Report

SUITE = "base-b-test-1-gpu-large"
TEST_FILE = """\
from sglang.test.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time={est}, stage="base-b", runner_config="1-gpu-large")


def test_quick():
    assert 1 + 1 == 2


if __name__ == "__main__":
    print("run")
"""


def make_tree(root: Path, budgets: dict[str, float]) -> None:
    tests = root / "test" / "registered"
    tests.mkdir(parents=True, exist_ok=True)
    for name, est in budgets.items():
        (tests / name).write_text(TEST_FILE.format(est=est))


def write_results(path: Path, files: list[dict]) -> Path:
    data = {"schema_version": 1, "meta": {"suites": [SUITE]}, "files": files}
    path.write_text(json.dumps(data))
    return path


def entry(name: str, elapsed: float, status: str = "passed", **kw) -> dict:
    return {"path": f"test/registered/{name}", "elapsed": elapsed, "status": status, **kw}


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GITHUB_") and k not in ("CI", "RUNNER_TEMP")
    }
    env.update(extra)
    return env


def cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "report", "--root", str(tmp_path), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env or clean_env(),
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path):
    make_tree(tmp_path, {"test_over.py": 790, "test_ok.py": 100, "test_slow.py": 600})
    write_results(
        tmp_path / "results-0.json",
        [entry("test_over.py", 900.0), entry("test_ok.py", 50.0)],
    )
    write_results(
        tmp_path / "results-1.json",
        [entry("test_slow.py", 1800.0, "timeout", timeout=1800.0, in_flight="x::T::t")],
    )
    return tmp_path


def test_report_writes_markdown_and_json(tree):
    proc = cli(tree, "--results", str(tree / "results-*.json"), "--out", "out/report.md")
    assert proc.returncode == 0, proc.stderr
    md = (tree / "out" / "report.md").read_text()
    assert proc.stdout == md  # not a tty: markdown on stdout
    assert md.startswith("<!-- ci-budget:run -->\n")
    assert "| `test_over.py` |" in md and "est_time=1080" in md
    report = Report.model_validate_json((tree / "out" / "report.json").read_text())
    assert [line.file.rsplit("/", 1)[1] for line in report.lines] == [
        "test_slow.py",
        "test_over.py",
        "test_ok.py",
    ]
    assert [line.status for line in report.lines] == ["timeout", "over", "ok"]
    assert report.suites[0].files == 3 and len(report.meta) == 2


def test_report_formats(tree):
    proc = cli(tree, "--results", str(tree / "results-0.json"), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert Report.model_validate_json(proc.stdout).lines[0].status == "over"
    proc = cli(tree, "--results", str(tree / "results-0.json"), "--format", "text")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^over\s+114%\s+█+\s+900s\s+790s\s+est_time=1080", proc.stdout, re.M)
    assert not list(tree.glob("ci-budget-report*"))  # a file only with --out


def test_actions_sinks(tree):
    summary = tree / "summary.md"
    summary.write_text("earlier step\n")
    outputs = tree / "outputs.txt"
    env = clean_env(
        GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(outputs)
    )
    out = ["--out", "ci-budget-report.md"]  # as the action passes it
    proc = cli(tree, "--results", str(tree / "results-*.json"), *out, env=env)
    assert proc.returncode == 0, proc.stderr
    md = (tree / "ci-budget-report.md").read_text()
    assert summary.read_text() == "earlier step\n" + md
    assert re.fullmatch(r"(\S+<<ghadelimiter_[0-9a-f]{32}\n[^\n]*\n\S+\n)+", outputs.read_text())
    assert read_output_file(outputs) == {
        "status": "timeout",
        "verdict": "fail",
        "over": "1",
        "near": "0",
        "timeouts": "1",
        "report-path": "ci-budget-report.md",
    }
    commands = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert commands == [
        "::error file=test/registered/test_slow.py,line=3,title=timed out::timed out after "
        "1,800s of 600s budget; suggest est_time>=2160 (a lower bound)",
        "::warning file=test/registered/test_over.py,line=3,title=over budget::measured 900s "
        "of 790s (114%25); suggest est_time=1080",  # % is escaped for the runner
    ]


def test_a_report_json_republished_without_out_names_no_file(tree):
    # The poster job of a fork PR publishes the report the GPU job wrote (--report-json). Without
    # --out nothing is written but the step summary: no `report: None`, no report-path "None".
    made = cli(tree, "--results", str(tree / "results-0.json"), "--out", "made.md")
    assert made.returncode == 0, made.stderr
    outputs = tree / "outputs.txt"
    env = clean_env(GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(tree / "summary.md"),
                    GITHUB_OUTPUT=str(outputs))  # fmt: skip
    proc = cli(tree, "--report-json", "made.json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "None" not in proc.stdout + proc.stderr
    assert read_output_file(outputs)["report-path"] == ""
    assert (tree / "summary.md").read_text() == (tree / "made.md").read_text()


def test_annotations_capped_at_ten_per_level(tmp_path):
    make_tree(tmp_path, {f"test_{i:02d}.py": 100 for i in range(30)})
    files = [entry(f"test_{i:02d}.py", 101 + i) for i in range(15)]  # over
    files += [entry(f"test_{i:02d}.py", 90) for i in range(15, 18)]  # near
    files += [entry(f"test_{i:02d}.py", 200, "timeout", timeout=200) for i in range(18, 30)]
    write_results(tmp_path / "r.json", files)
    proc = cli(tmp_path, "--results", "r.json", env=clean_env(GITHUB_ACTIONS="true"))
    assert proc.returncode == 0, proc.stderr
    errors = [x for x in proc.stdout.splitlines() if x.startswith("::error ")]
    warnings = [x for x in proc.stdout.splitlines() if x.startswith("::warning ")]
    assert len(errors) == 10 and len(warnings) == 10
    assert all("title=over budget" in w for w in warnings)  # over before near: worst first
    assert "test_14.py" in warnings[0]  # highest ratio first
    # outside Actions: no workflow commands
    proc = cli(tmp_path, "--results", "r.json")
    assert not any(x.startswith("::") for x in proc.stdout.splitlines())


@pytest.mark.parametrize(
    ("fail_on", "files", "code"),
    [
        ("over", [entry("test_a.py", 101)], 1),
        ("over", [entry("test_a.py", 50, "timeout", timeout=50)], 1),
        ("over", [entry("test_a.py", 95), entry("test_b.py", 1, "failed")], 0),
        ("timeout", [entry("test_a.py", 500)], 0),
        ("timeout", [entry("test_a.py", 500, "timeout", timeout=500)], 1),
        ("failed", [entry("test_a.py", 5, "crashed")], 1),
        ("failed", [entry("test_a.py", 500)], 0),
        ("never", [entry("test_a.py", 500, "timeout", timeout=500)], 0),
    ],
)
def test_fail_on(tmp_path, fail_on, files, code):
    make_tree(tmp_path, {"test_a.py": 100, "test_b.py": 100})
    write_results(tmp_path / "r.json", files)
    summary = tmp_path / "summary.md"
    env = clean_env(GITHUB_STEP_SUMMARY=str(summary))
    proc = cli(tmp_path, "--results", "r.json", "--fail-on", fail_on, "--out",
               "ci-budget-report.md", env=env)  # fmt: skip
    assert proc.returncode == code, proc.stderr
    # written before the exit status is decided
    assert (tmp_path / "ci-budget-report.md").read_text() == summary.read_text()
    assert (tmp_path / "ci-budget-report.json").is_file()


def test_bad_input_exits_2_naming_it(tmp_path):
    make_tree(tmp_path, {"test_a.py": 100})
    (tmp_path / "broken.json").write_text('{"schema_version": 1, "files": [')
    cases = {
        ("--results", "missing.json"): "missing.json: no such file",
        ("--results", "shards/*.json"): "shards/*.json: glob matched no files",
        ("--results", "shards/*.json", "--comment-mode", "off"): "applies only with --post",
        ("--results", "broken.json"): "broken.json:1:",
        (): "give --results",
    }
    for args, message in cases.items():
        proc = cli(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stdout)
        assert proc.stderr.startswith("ci-budget report: ")
        assert message in proc.stderr
        assert "Traceback" not in proc.stderr


def test_json_report_from_a_real_pytest_run(tmp_path):
    make_tree(tmp_path, {"test_quick.py": 100})
    # the import the registered file makes, as sglang provides it: a no-op at test time
    package = tmp_path / "sglang" / "test" / "ci"
    package.mkdir(parents=True)
    (package / "ci_register.py").write_text("def register_cuda_ci(*args, **kwargs):\n    pass\n")
    report_file = tmp_path / "pytest-report.json"
    subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
            str(tmp_path), "--json-report", f"--json-report-file={report_file}",
            "test/registered/test_quick.py",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True,
        env=clean_env(PYTHONPATH=str(tmp_path)),
    )  # fmt: skip
    proc = cli(tmp_path, "--json-report", str(report_file), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    (line,) = report.lines
    assert (line.file, line.suite, line.est_time) == ("test/registered/test_quick.py", SUITE, 100)
    assert line.file_status == "passed" and line.measured is not None
    assert line.status == "stale"  # a trivial test uses far less than 100s
    assert report.warnings == []


def run_inprocess(monkeypatch, tmp_path, *args: str, **env: str) -> int:
    from ci_budget.cli import main

    for key in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    return main(["report", "--root", str(tmp_path), *args])


def test_post_failure_keeps_the_report_and_hides_the_token(monkeypatch, tmp_path, capsys):
    make_tree(tmp_path, {"test_a.py": 100})
    write_results(tmp_path / "r.json", [entry("test_a.py", 50)])
    calls = []

    def upsert(client, number, kind, body, create=True):
        calls.append((body, kind, number))
        raise RuntimeError("401 Bad credentials for token s3cr3t")

    monkeypatch.setattr("ci_budget.github.sticky.upsert", upsert)
    code = run_inprocess(
        monkeypatch, tmp_path, "--results", "r.json", "--post", "--pr", "7", "--token", "s3cr3t",
        "--kind", "nightly", "--out", "ci-budget-report.md", GITHUB_REPOSITORY="octo/repo",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    md = (tmp_path / "ci-budget-report.md").read_text()
    assert calls == [(md, "nightly", 7)]
    assert "posting the comment failed: 401 Bad credentials for token ***" in err
    assert "s3cr3t" not in err


def test_post_upserts_the_sticky_comment_on_a_local_github(tmp_path, github_standin):
    from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN

    make_tree(tmp_path, {"test_a.py": 100})
    github_standin.add_pull(7)
    env = clean_env(
        GITHUB_API_URL=github_standin.url,
        GITHUB_REPOSITORY=github_standin.state.repo,
        GITHUB_TOKEN=INSTALLATION_TOKEN,
    )
    for elapsed in (150, 50):  # over, then fixed: the same comment is edited, not a new one
        write_results(tmp_path / "r.json", [entry("test_a.py", elapsed)])
        proc = cli(tmp_path, "--results", "r.json", "--post", "--pr", "7", env=env)
        assert proc.returncode == 0, proc.stderr
        assert INSTALLATION_TOKEN not in proc.stdout + proc.stderr
    [comment] = [c for c in github_standin.comments(7) if c.login == BOT_LOGIN]
    assert comment.body.startswith("<!-- ci-budget:run -->")
    assert comment.body.count("<!-- ci-budget:run -->") == 1
    assert "1 ok" in comment.body and "over budget" not in comment.body


def test_allow_empty_a_glob_matching_nothing_is_a_report_that_nothing_ran(tmp_path):
    make_tree(tmp_path, {"test_a.py": 100})
    proc = cli(tmp_path, "--results", "shards/*/ci-budget-results.json", "--allow-empty",
               "--out", "ci-budget-report.md")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "ci-budget-report.md").read_text()
    assert md.splitlines()[1] == "## ✅ ci-budget: nothing ran, no job left results"
    assert Report.model_validate_json((tmp_path / "ci-budget-report.json").read_text()).lines == []
    # a path that is not there is still an error: only a glob may match nothing
    proc = cli(tmp_path, "--results", "missing.json", "--allow-empty")
    assert proc.returncode == 2 and "missing.json: no such file" in proc.stderr


@pytest.mark.parametrize(
    ("mode", "elapsed", "created"),
    [("changes", 50, False), ("changes", 150, True), ("always", 50, True), ("off", 150, False)],
)
def test_comment_mode_creates_a_comment_only_when_it_says(tmp_path, github_standin, mode,
                                                          elapsed, created):  # fmt: skip
    from ghstandin import INSTALLATION_TOKEN

    make_tree(tmp_path, {"test_a.py": 100})
    github_standin.add_pull(7)
    env = clean_env(GITHUB_API_URL=github_standin.url, GITHUB_TOKEN=INSTALLATION_TOKEN,
                    GITHUB_REPOSITORY=github_standin.state.repo)  # fmt: skip
    write_results(tmp_path / "r.json", [entry("test_a.py", elapsed)])
    proc = cli(tmp_path, "--results", "r.json", "--post", "--pr", "7", "--comment-mode", mode,
               env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(github_standin.comments(7)) == int(created)
    said = {"off": "comment-mode off: no run comment posted",
            "changes": "no run comment on " if not created else "created the run comment"}  # fmt: skip
    assert said.get(mode, "created the run comment") in proc.stdout


def test_a_results_file_where_nothing_ran_says_so_in_its_headline(tmp_path):
    make_tree(tmp_path, {f"test_{i}.py": 100 for i in range(11)})
    write_results(tmp_path / "r.json", [entry(f"test_{i}.py", 0.0, "not-run") for i in range(11)])
    proc = cli(tmp_path, "--results", str(tmp_path / "r.json"), "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == "## ⚠️ ci-budget: nothing ran (11 files not run)"
    assert "nothing to act on" not in proc.stdout
    proc = cli(tmp_path, "--results", str(tmp_path / "r.json"), "--format", "text")
    assert proc.stdout.splitlines()[0] == "WARNING ci-budget (run): nothing ran (11 files not run)"
    write_results(tmp_path / "none.json", [])
    proc = cli(tmp_path, "--results", str(tmp_path / "none.json"), "--format", "markdown")
    assert proc.stdout.splitlines()[1] == "## ⚠️ ci-budget: nothing ran (no file in the results)"
    write_results(tmp_path / "one.json", [entry("test_0.py", 50.0)])
    proc = cli(tmp_path, "--results", str(tmp_path / "one.json"), "--format", "markdown")
    assert proc.stdout.splitlines()[1] == "## ✅ ci-budget: nothing to act on"


def test_results_of_another_commit_or_repository_say_so_in_the_headline(tmp_path):
    make_tree(tmp_path, {"test_ok.py": 100})
    for argv in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-qm", "x"]):  # fmt: skip
        subprocess.run(["git", *argv], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    results = tmp_path / "r.json"

    def headline(meta: dict, env: dict[str, str]) -> str:
        data = {
            "schema_version": 1,
            "meta": {"suites": [SUITE], **meta},
            "files": [entry("test_ok.py", 50.0)],
        }
        results.write_text(json.dumps(data))
        proc = cli(tmp_path, "--results", str(results), "--format", "markdown",
                   env=clean_env(**env))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()[1]

    mine = {"GITHUB_REPOSITORY": "sgl-project/sglang"}
    assert headline({"commit": head, "repository": "sgl-project/sglang"}, mine) == (
        "## ✅ ci-budget: nothing to act on"
    )
    assert headline({"commit": head[:7]}, mine) == "## ✅ ci-budget: nothing to act on"
    other = "0123456789abcdef0123456789abcdef01234567"
    assert headline({"commit": other}, mine) == (
        f"## ⚠️ ci-budget: results of another commit 0123456789ab (the checkout is {head[:12]})"
    )
    assert headline({"commit": head, "repository": "someone/sglang"}, mine) == (
        "## ⚠️ ci-budget: results of another repository someone/sglang (this is sgl-project/sglang)"
    )
