"""No quiet mistakes on the command line: each gets one clear line and exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci_budget.cli import build_parser, leaves, main

HEADER = """\
import unittest


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=5, stage="base-b", runner_config="1-gpu-large")


class TestA(unittest.TestCase):
    def test_one(self):
        pass
"""
FILE = "test/registered/test_a.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / FILE
    path.parent.mkdir(parents=True)
    path.write_text(HEADER)
    return tmp_path / "repo"


def test_every_command_takes_root_and_config():
    found = {leaf.prog.removeprefix("ci-budget "): leaf for leaf in leaves(build_parser())}
    assert "history show" in found and "guard check" in found and len(found) == 13
    for name, parser in found.items():
        options = {o for a in parser._actions for o in a.option_strings}
        assert {"--root", "--config"} <= options, name


def _err(capsys, argv) -> tuple[int, list[str]]:
    rc = main(argv)
    return rc, capsys.readouterr().err.strip().splitlines()


def test_scan_unknown_suite_exits_2_like_run(repo, capsys):
    rc, err = _err(capsys, ["scan", "--root", str(repo), "--suite", "nope"])
    assert rc == 2
    assert err == ["ci-budget scan: unknown suite 'nope' (known: 'base-b-test-1-gpu-large')"]
    rc, err = _err(capsys, ["scan", "--root", str(repo), "--stage", "base-z"])
    assert rc == 2 and "unknown stage 'base-z'" in err[0]


def test_history_reads_config_and_keeps_its_store_at_root(repo, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[thresholds]\nnear = 1.5\n")
    rc, err = _err(capsys, ["history", "show", "--root", str(repo), "--config", str(bad)])
    assert rc == 2 and err == [
        f"ci-budget history show: {bad}: thresholds: near (1.5) must be below over (1)"
    ]
    rc, err = _err(capsys, ["history", "show", "--root", str(repo)])
    assert rc == 2 and str(repo / "ci-budget-history.json") in err[0]


def test_negative_partition_is_explained(repo, capsys):
    rc, err = _err(capsys, ["run", "--root", str(repo), "--suite", "base-b-test-1-gpu-large",
                            "--partition", "-1/2"])  # fmt: skip
    assert rc == 2
    assert err == ["ci-budget run: --partition: partition '-1/2': need 0 <= i < n"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (f"{FILE}::TestX", f"no class TestX in {FILE}"),
        (f"{FILE}::TestA.test_two", f"no test test_two in class TestA of {FILE}"),
        (f"{FILE}::test_free", f"no test function test_free in {FILE}"),
    ],
)
def test_spec_naming_a_missing_class_or_test(repo, tmp_path, capsys, spec, message):
    out = tmp_path / "r.json"
    rc, err = _err(capsys, ["run", "--root", str(repo), spec, "--out", str(out)])
    assert (rc, err) == (2, [f"ci-budget run: {message}"])
    assert not out.exists()  # nothing ran


def test_python_without_pytest_is_one_error_up_front(repo, tmp_path, capsys):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    out = tmp_path / "r.json"
    python = venv / "bin" / "python"
    rc, err = _err(capsys, ["run", "--root", str(repo), "--suite", "base-b-test-1-gpu-large",
                            "--python", str(python), "--out", str(out)])  # fmt: skip
    assert rc == 2 and len(err) == 1
    assert err[0].startswith(f"ci-budget run: --python {python}: cannot import pytest")
    assert "No module named 'pytest'" in err[0]
    assert not out.exists()


def test_an_unknown_option_gets_the_commands_usage_and_the_closest_option(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["scan", "--fromat", "json"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("usage: ci-budget scan")  # the command's, not the top's
    assert "unrecognized arguments: --fromat json; did you mean --format?" in err


def test_history_suggest_takes_the_store_as_every_command_does(repo, tmp_path):
    args = build_parser().parse_args(["history", "suggest", "--history", str(tmp_path / "h.json")])
    assert args.store == tmp_path / "h.json"


def test_a_flag_that_would_be_ignored_is_refused(repo, capsys):
    rc, err = _err(capsys, ["run", "--root", str(repo), "--suite", "base-b-test-1-gpu-large",
                            "--format", "json"])  # fmt: skip
    assert (rc, err) == (2, ["ci-budget run: --format applies only with --dry-run"])
    rc, err = _err(capsys, ["guard", "fill", str(repo / FILE), "--reverted"])
    assert (rc, err) == (2, ["ci-budget guard fill: --reverted applies only with --fill-from"])


def test_format_takes_one_vocabulary(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["scan", "--format", "markdown"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --format: invalid choice: 'markdown' (choose from 'text', 'json')" in err


def test_diff_refuses_a_flag_of_the_run_report(repo, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["diff", "--root", str(repo), "--base", "HEAD", "--results", "r.json"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --results r.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    "words, error",
    [
        (["arch"], "ci-budget: error: argument COMMAND: invalid choice: 'arch'"),
        (
            ["history", "import-logs"],
            "ci-budget history: error: argument VERB: invalid choice: 'import-logs'",
        ),  # fmt: skip
        (
            ["report", "--base", "main"],
            "ci-budget report: error: unrecognized arguments: --base main",
        ),
    ],
)
def test_a_spelling_from_before_the_first_release_is_a_usage_error(words, error):
    """No aliases: a real process, argparse's usage and one error line, exit 2, nothing run."""
    done = subprocess.run([sys.executable, "-m", "ci_budget.cli", *words],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("usage: ci-budget")
    assert done.stderr.splitlines()[-1].startswith(error)
    assert "is now" not in done.stderr
