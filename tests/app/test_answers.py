"""Answers a maintainer gets on an sglang-shaped checkout: the right one, or one clear line.

Each case is one that was wrong or unhelpful on sglang main (an est_time=0 file that ran shown
as not run, a dry run promising a class the run refuses, an 8 KB list of suites, files left in
the user's checkout, ...)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import git

from ci_budget.cli import main

HEADER = """\
import unittest


def register_cuda_ci(**kwargs):
    pass


def register_npu_ci(**kwargs):
    pass


"""
BODY = """

class TestA(unittest.TestCase):
    def test_one(self):
        pass


if __name__ == "__main__":
    unittest.main()
"""
# 30 suites, as a large registry has them; one registered with an empty name, as sglang's
# nightly NPU files are; one nightly-only.
SUITES = [f"base-{s}-test-{n}-gpu-large" for s in "abcdef" for n in (1, 2, 4, 8, 16)]


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    reg = root / "test" / "registered"
    reg.mkdir(parents=True)
    for i, suite in enumerate(SUITES):
        (reg / f"test_{i}.py").write_text(
            HEADER + f'register_cuda_ci(est_time={10 + i}, suite="{suite}")\n' + BODY
        )
    (reg / "test_zero.py").write_text(
        HEADER + 'register_cuda_ci(est_time=0, suite="zero")\n' + BODY
    )
    (reg / "test_npu.py").write_text(
        HEADER + 'register_npu_ci(est_time=4800, suite="", nightly=True, disabled="perf")\n' + BODY
    )
    (reg / "test_nightly.py").write_text(
        HEADER + 'register_cuda_ci(est_time=60, suite="nightly-x", nightly=True)\n' + BODY
    )
    (root / "README.md").write_text("# Title\n\nNot Python 🌐\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err


# --- one wording of an unknown suite -----------------------------------------------------------


def test_an_unknown_suite_is_one_short_line_with_the_closest_suites(tmp_path, capsys):
    root = str(repo(tmp_path))
    typo = "base-b-test-1-gpu-larg"
    want = (
        f"unknown suite '{typo}'; did you mean 'base-b-test-1-gpu-large', "
        "'base-b-test-16-gpu-large' or 'base-f-test-1-gpu-large'? "
        "(32 suites are registered; `ci-budget scan` lists them)"
    )
    for argv in (
        ["run", "--dry-run", "--suite", typo],
        ["scan", "--suite", typo],
        ["guard", "check", "--suite", typo],
    ):
        rc, out, err = cli(capsys, *argv, "--root", root)
        assert (rc, out) == (2, ""), argv
        assert err == f"ci-budget {' '.join(argv[:2]) if argv[0] == 'guard' else argv[0]}: {want}\n"
    rc, out, _ = cli(capsys, "plan", "--root", root, "--suite", typo)
    assert rc == 0
    assert f"reason: workflow_dispatch refused: {want.replace(chr(39), '`')}" in out
    assert "''" not in err and ", ," not in err  # the empty suite name is never offered


def test_plan_stops_on_a_registry_error_with_a_line_per_error(tmp_path, capsys, monkeypatch):
    """sglang's compute_partitions.py stops on `est_time="1150"`; a plan without the file
    would run one shard fewer without a word."""
    root = repo(tmp_path)
    bad = root / "test/registered/test_1.py"
    bad.write_text(bad.read_text().replace("est_time=11,", 'est_time="1150",'))
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    rc, out, err = cli(capsys, "plan", "--root", str(root), "--suite", SUITES[1])
    assert rc == 2
    assert err == (
        "error: test/registered/test_1.py:12:27: register_cuda_ci(): est_time must be a number "
        "of seconds, not '1150'\n"
    )
    reason = (
        "1 registry error(s) in 1 file(s) (test/registered/test_1.py): not running; "
        "ci-budget scan lists them"
    )
    assert out.splitlines()[:3] == ["should-run: false", "trigger: dispatch", f"reason: {reason}"]
    assert "job:" not in out
    written = outputs.read_text().splitlines()
    at = next(i for i, x in enumerate(written) if x.startswith("should-run<<"))
    assert written[at + 1] == "false"
    assert reason in summary.read_text()
    bad.write_text(bad.read_text().replace('est_time="1150",', "est_time=1150,"))
    rc, out, err = cli(capsys, "plan", "--root", str(root), "--suite", SUITES[1])
    assert (rc, err) == (0, "") and "registry error" not in out  # planned as usual


def test_a_nightly_only_suite_names_the_flag(tmp_path, capsys):
    root = str(repo(tmp_path))
    rc, _, err = cli(capsys, "run", "--dry-run", "--root", root, "--suite", "nightly-x")
    assert rc == 2
    assert err == (
        "ci-budget run: nightly-x: only nightly=True registrations (1 file(s)); "
        "add --nightly to run them\n"
    )
    rc, out, _ = cli(
        capsys, "run", "--dry-run", "--root", root, "--suite", "nightly-x", "--nightly"
    )
    assert rc == 0 and "test/registered/test_nightly.py" in out


def test_scan_names_the_nameless_suite(tmp_path, capsys):
    rc, out, _ = cli(capsys, "scan", "--root", str(repo(tmp_path)))
    assert rc == 0
    assert out.splitlines()[-4] == '(no suite name: suite="")  1 file, 1 disabled  0.0s'
    assert not any(line.startswith("  1 file") for line in out.splitlines())


# --- run: what --dry-run promises, what it leaves behind -----------------------------------------


def test_dry_run_refuses_a_class_the_file_does_not_define(tmp_path, capsys):
    root = str(repo(tmp_path))
    spec = "test/registered/test_0.py::TestNope"
    rc, out, err = cli(capsys, "run", "--dry-run", "--root", root, spec)
    assert (rc, out) == (2, "")
    assert err == "ci-budget run: no class TestNope in test/registered/test_0.py\n"
    rc, out, _ = cli(capsys, "run", "--dry-run", "--root", root, spec.replace("Nope", "A"))
    assert rc == 0 and "test_0.py::TestA" in out


def test_run_leaves_only_its_results_file(tmp_path, monkeypatch, capsys):
    root = repo(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = ["run", "--root", str(root), "--suite", "zero", "--out", "results.json"]
    rc, out, err = cli(capsys, *argv, "--python", sys.executable)
    assert rc == 0, err
    assert sorted(p.name for p in work.iterdir()) == ["results.json"]
    assert "generated report log file" not in out  # pytest-reportlog's line, about our file
    assert "raw reports" not in err  # all passed: the temporary folder is gone, unsaid
    # est_time=0 and ran: over budget (any time is), not "not run"
    rc, out, _ = cli(capsys, "report", "--root", str(root), "--results", "results.json",
                     "--format", "text")  # fmt: skip
    assert rc == 0
    row = next(line for line in out.splitlines() if line.endswith("test/registered/test_zero.py"))
    assert row.split()[:2] == ["over", "-"] and " 0.0s " in row
    assert sorted(p.name for p in work.iterdir()) == ["results.json"]  # no report file either


def test_a_failing_file_keeps_its_raw_reports_and_says_where(tmp_path, monkeypatch, capsys):
    root = repo(tmp_path)
    bad = root / "test" / "registered" / "test_0.py"
    bad.write_text(bad.read_text().replace("        pass", "        assert False"))
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--root", str(root), "--suite", SUITES[0], "--out", str(tmp_path / "r.json")]
    rc, _, err = cli(capsys, *argv, "--python", sys.executable)
    assert rc == 1
    [line] = [e for e in err.splitlines() if e.startswith("raw reports")]
    folder = Path(line.split(": ", 1)[1].split(" (")[0])
    assert list(folder.glob("*test_0.log")) and not (tmp_path / "r-artifacts").exists()
    assert not folder.is_relative_to(tmp_path)  # a temporary folder, not the user's
    shutil.rmtree(folder)


# --- report and diff write files only where asked ------------------------------------------------


def test_report_and_diff_write_no_file_without_out(tmp_path, monkeypatch, capsys):
    root = repo(tmp_path)
    results = tmp_path / "r.json"
    ran = {"path": "test/registered/test_zero.py", "elapsed": 3.0, "status": "passed"}
    results.write_text(
        json.dumps({"schema_version": 1, "meta": {"suites": ["zero"]}, "files": [ran]})
    )
    monkeypatch.chdir(root)
    for argv in (
        ["report", "--results", str(results), "--format", "text"],
        ["report", "--results", str(results), "--format", "json"],
        ["diff", "--base", "HEAD", "--format", "text"],
    ):
        rc, out, _ = cli(capsys, *argv)
        assert rc == 0 and out, argv
        assert git(root, "status", "--porcelain") == "", argv
    rc, _, _ = cli(capsys, "report", "--results", str(results), "--out", str(tmp_path / "x.md"))
    assert rc == 0 and (tmp_path / "x.md").is_file() and (tmp_path / "x.json").is_file()


def test_diff_outside_a_git_repository_says_so(tmp_path, capsys):
    (tmp_path / "plain").mkdir()
    rc, out, err = cli(capsys, "diff", "--root", str(tmp_path / "plain"), "--base", "HEAD")
    assert (rc, out) == (2, "")
    assert err == (
        f"ci-budget diff: --base HEAD: {tmp_path / 'plain'} is not inside a git repository "
        "(diff compares git commits)\n"
    )


# --- guard ---------------------------------------------------------------------------------------


def test_guard_check_of_a_file_that_is_not_python_is_an_input_error(tmp_path, capsys):
    root = repo(tmp_path)
    rc, _, err = cli(capsys, "guard", "check", "--root", str(root), str(root / "README.md"))
    assert rc == 2
    assert err.startswith("error: README.md:3:0: cannot parse: invalid character")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="needs a machine without a GPU")
def test_guard_verify_takes_a_relative_python_and_refuses_to_file_cpu_values(
    tmp_path, monkeypatch, capsys
):
    from tests.arch.test_guard_verify import guard_repo

    root, fix = guard_repo(tmp_path)
    from tests.arch.test_guard_printed import REL

    wrapper = tmp_path / "env" / "bin" / "python"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STANDIN_ARCH", "sm90")
    argv = ["guard", "verify", "--root", str(root), str(root / REL), "--revert", fix,
            "--arch", "sm90", "--python", "env/bin/python"]  # fmt: skip
    before = (root / REL).read_text()
    rc, _, err = cli(capsys, *argv, "--write")
    assert rc == 2 and (root / REL).read_text() == before
    assert err == (
        "ci-budget guard verify: --arch sm90: this machine has no GPU (the tests take their CPU "
        "path); its values are not sm90's; refusing --write (--force-arch writes them anyway)\n"
    )
    rc, out, err = cli(capsys, *argv)  # a relative --python, as `run` takes it: no traceback
    assert rc == 0, err
    assert err.splitlines()[0].startswith("warning: --arch sm90: this machine has no GPU")
    assert "sm90, reverted commit" in out


# --- history -------------------------------------------------------------------------------------


def test_history_add_of_a_bad_file_creates_no_store(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"bad": 1}')
    store = tmp_path / "new.json"
    rc, out, err = cli(capsys, "history", "add", str(bad), "--history", str(store))
    assert rc == 2 and not store.exists()
    assert out == f"{store}: not created (no results file could be read)\n"
    assert "bad.json: neither a ci-budget results file" in err


def test_pytest_reportlog_still_writes_every_record(tmp_path):
    """The progress plugin silences pytest-reportlog's summary line, not its log."""
    from ci_budget.runner.run import prepare_plugin_dir

    plugins = prepare_plugin_dir(tmp_path / "plugins")
    (tmp_path / "test_x.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    log = tmp_path / "log.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "test_x.py", "-p", "pytest_reportlog",
         "-p", "ci_budget_progress", f"--report-log={log}", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120,
        env=os.environ | {"PYTHONPATH": str(plugins)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "generated report log file" not in proc.stdout
    kinds = [json.loads(line)["$report_type"] for line in log.read_text().splitlines()]
    assert kinds.count("TestReport") == 6 and kinds[-1] == "SessionFinish"
