"""Every spelling from before the CLI was drawn around its concepts still works for one release:
it does exactly what its new spelling does, and says so in one notice line on stderr."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ci_budget.cli import main
from ci_budget.history.logs import timings_block
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.runner.outcome import write_results

SUITE = "base-b-test-1-gpu-large"
FILE = "test/registered/test_a.py"
SOURCE = """\
import unittest


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=5, stage="base-b", runner_config="1-gpu-large")


class TestA(unittest.TestCase):
    '''Measured KL (avg_kl_div):

        fix            sm90
        reverted       0.3
        in place       0
    '''

    def test_one(self):
        pass
"""


def notice(old: str, new: str) -> str:
    return f"ci-budget: {old} is now {new}; the old name goes in the next release"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / FILE).parent.mkdir(parents=True)
    (root / FILE).write_text(SOURCE)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    result = FileResult(path=FILE, suite=SUITE, est_time=5, elapsed=40.0, status="passed")
    write_results(RunResults(meta=RunMeta(suites=[SUITE]), files=[result]), tmp_path / "r.json")
    (tmp_path / "job.log").write_text("Running suite\n" + timings_block([result]))
    return root


def run(capsys, argv: list[str]) -> tuple[int, str, list[str]]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err.splitlines()


def same(capsys, tmp_path: Path, old: list[str], new: list[str], line: str) -> None:
    """`old` and `new` each in a fresh copy of the work folder ({w}: the repository, a results
    file, a job log and, when there is one, a store): the same status, output and messages,
    with the one notice line first for `old`."""
    results = []
    for name, argv in (("old", old), ("new", new)):
        work = tmp_path / name
        shutil.copytree(tmp_path / "repo", work / "repo", symlinks=True)
        for extra in ("r.json", "job.log", "h.json"):
            if (tmp_path / extra).exists():
                shutil.copy(tmp_path / extra, work / extra)
        rc, out, err = run(capsys, [a.replace("{w}", str(work)) for a in argv])
        results.append(
            (rc, out.replace(str(work), "{w}"), [e.replace(str(work), "{w}") for e in err])
        )
    (rc_old, out_old, err_old), (rc_new, out_new, err_new) = results
    assert err_old[:1] == [line], err_old
    assert (rc_old, out_old, err_old[1:]) == (rc_new, out_new, err_new)
    assert not any("is now" in e for e in err_new)


def with_store(tmp_path: Path, capsys) -> None:
    """h.json in the work folder, holding the results file's sample."""
    assert (
        main(["history", "add", str(tmp_path / "r.json"), "--history", str(tmp_path / "h.json")])
        == 0
    )
    capsys.readouterr()


ROOT = ["--root", "{w}/repo"]
COMMANDS = {
    "arch": (["arch", *ROOT, FILE], ["guard", "check", *ROOT, FILE], "'arch'", "'guard check'"),
    "arch-table": (
        ["arch-table", *ROOT, "{w}/repo/" + FILE],
        ["guard", "fill", *ROOT, "{w}/repo/" + FILE],
        "'arch-table'",
        "'guard fill'",
    ),
    "suggest": (
        ["suggest", *ROOT, "--history", "{w}/h.json"],
        ["history", "suggest", *ROOT, "--history", "{w}/h.json"],
        "'suggest'",
        "'history suggest'",
    ),
    "history import-logs": (
        [
            "history",
            "import-logs",
            "--from",
            "{w}/job.log",
            "--suite",
            SUITE,
            "--history",
            "{w}/h.json",
        ],
        ["history", "import", "--from", "{w}/job.log", "--suite", SUITE, "--history", "{w}/h.json"],
        "'history import-logs'",
        "'history import'",
    ),
    "report --base": (
        ["report", *ROOT, "--base", "HEAD", "--out", "{w}/b.md", "--format", "markdown"],
        ["diff", *ROOT, "--base", "HEAD", "--out", "{w}/b.md", "--format", "markdown"],
        "'report --base'",
        "'diff --base'",
    ),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_an_old_command_name_runs_its_new_one_with_one_notice(name, repo, tmp_path, capsys):
    old, new, was, now = COMMANDS[name]
    if name == "suggest":
        with_store(tmp_path, capsys)
    same(capsys, tmp_path, old, new, notice(was, now))


FLAGS = {
    "plan --suites": (
        ["plan", *ROOT, "--suites", SUITE, "--format", "json"],
        ["plan", *ROOT, "--suite", SUITE, "--format", "json"],
        "--suites",
        "--suite",
    ),
    "history add --store": (
        ["history", "add", "{w}/r.json", "--store", "{w}/h.json"],
        ["history", "add", "{w}/r.json", "--history", "{w}/h.json"],
        "--store",
        "--history",
    ),
    "history show --store": (
        ["history", "show", "--store", "{w}/h.json", "--format", "json"],
        ["history", "show", "--history", "{w}/h.json", "--format", "json"],
        "--store",
        "--history",
    ),
    "history import-logs --store": (
        ["history", "import", "--from", "{w}/job.log", "--suite", SUITE, "--store", "{w}/h.json"],
        ["history", "import", "--from", "{w}/job.log", "--suite", SUITE, "--history", "{w}/h.json"],
        "--store",
        "--history",
    ),
    "suggest --store": (
        ["history", "suggest", *ROOT, "--store", "{w}/h.json"],
        ["history", "suggest", *ROOT, "--history", "{w}/h.json"],
        "--store",
        "--history",
    ),
    "history show STORE": (
        ["history", "show", "{w}/h.json"],
        ["history", "show", "--history", "{w}/h.json"],
        "'history show STORE'",
        "'history show --history STORE'",
    ),
    "scan --format table": (
        ["scan", *ROOT, "--format", "table"],
        ["scan", *ROOT, "--format", "text"],
        "--format table",
        "--format text",
    ),
    "arch --format table": (
        ["guard", "check", *ROOT, FILE, "--format", "table"],
        ["guard", "check", *ROOT, FILE, "--format", "text"],
        "--format table",
        "--format text",
    ),
    "history show --format table": (
        ["history", "show", "--history", "{w}/h.json", "--format", "table"],
        ["history", "show", "--history", "{w}/h.json", "--format", "text"],
        "--format table",
        "--format text",
    ),
    "suggest --format table": (
        ["history", "suggest", *ROOT, "--history", "{w}/h.json", "--format", "table"],
        ["history", "suggest", *ROOT, "--history", "{w}/h.json", "--format", "text"],
        "--format table",
        "--format text",
    ),
    "report --format terminal": (
        ["report", *ROOT, "--results", "{w}/r.json", "--out", "{w}/r.md", "--format", "terminal"],
        ["report", *ROOT, "--results", "{w}/r.json", "--out", "{w}/r.md", "--format", "text"],
        "--format terminal",
        "--format text",
    ),
    "report --base --format terminal": (
        ["diff", *ROOT, "--base", "HEAD", "--out", "{w}/b.md", "--format", "terminal"],
        ["diff", *ROOT, "--base", "HEAD", "--out", "{w}/b.md", "--format", "text"],
        "--format terminal",
        "--format text",
    ),
}


@pytest.mark.parametrize("name", FLAGS)
def test_an_old_flag_or_value_works_as_its_new_one_with_one_notice(
    name, repo, tmp_path, capsys, monkeypatch
):
    for var in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_ACTIONS", "GITHUB_OUTPUT"):
        monkeypatch.delenv(var, raising=False)
    old, new, was, now = FLAGS[name]
    if "h.json" in " ".join(old) and name not in (
        "history add --store",
        "history import-logs --store",
    ):
        with_store(tmp_path, capsys)
    same(capsys, tmp_path, old, new, notice(was, now))


def test_an_old_spelling_given_twice_says_so_once(repo, tmp_path, capsys):
    rc, _, err = run(capsys, ["plan", "--root", str(repo), "--suites", SUITE, "--suites", SUITE])
    assert rc == 0
    assert err.count(notice("--suites", "--suite")) == 1


@pytest.mark.parametrize("flag", [["--results", "r.json"], ["--json-report", "j.json"],
                                  ["--kind", "run"], ["--classes=none"]])  # fmt: skip
def test_report_base_refuses_what_the_static_report_does_not_take(flag, repo, capsys):
    rc, out, err = run(capsys, ["report", "--root", str(repo), "--base", "HEAD", *flag])
    name = flag[0].split("=")[0]
    assert (rc, out) == (2, "")
    assert err == [
        f"ci-budget report: {name}: not for the static report ('report --base' is now 'diff', "
        "which reads no run results)"
    ]


def test_diff_refuses_a_flag_of_the_run_report(repo, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["diff", "--root", str(repo), "--base", "HEAD", "--results", "r.json"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --results r.json" in capsys.readouterr().err


def test_old_spellings_stay_out_of_help_and_of_did_you_mean(capsys):
    with pytest.raises(SystemExit):
        main(["history", "show", "--help"])
    shown = capsys.readouterr().out
    assert "--store" not in shown and "STORE" not in shown
    with pytest.raises(SystemExit):
        main(["history", "show", "--stroe", "x"])
    err = capsys.readouterr().err
    assert "did you mean --history?" not in err and "did you mean --store?" not in err


@pytest.mark.parametrize("order", ["old first", "new first"])
def test_the_old_positional_store_and_the_new_flag_together_are_refused(order, tmp_path, capsys):
    both = [str(tmp_path / "a.json"), "--history", str(tmp_path / "b.json")]
    rc, _, err = run(capsys, ["history", "show", *(both if order == "old first" else both[::-1])])
    assert rc == 2
    assert (
        err[-1]
        == "ci-budget history show: given both as STORE and as --history: give --history only"
    )


CACHE_GONE = (
    "ci-budget: --cache is ignored: the scan cache was removed (it saved under 2×, "
    "docs/performance.md); the flag goes in the next release"
)
REMOVED = {
    "scan --cache FILE": (
        ["scan", *ROOT, "--cache", "{w}/c.json", "--format", "json"],
        ["scan", *ROOT, "--format", "json"],
    ),
    "diff --cache=FILE": (
        [
            "diff",
            *ROOT,
            "--base",
            "HEAD",
            "--out",
            "{w}/b.md",
            "--format",
            "json",
            "--cache={w}/c.json",
        ],
        ["diff", *ROOT, "--base", "HEAD", "--out", "{w}/b.md", "--format", "json"],
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", REMOVED)
def test_a_removed_cache_flag_is_taken_ignored_and_named_once(
    name, repo, tmp_path, capsys, monkeypatch
):
    for var in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_ACTIONS", "GITHUB_OUTPUT"):
        monkeypatch.delenv(var, raising=False)
    old, new = REMOVED[name]
    same(capsys, tmp_path, old, new, CACHE_GONE)
    assert not (tmp_path / "old" / "c.json").exists()  # nothing written where it pointed


def test_report_base_with_the_removed_cache_flag_says_both_once(repo, tmp_path, capsys):
    rc, _, err = run(capsys, ["report", "--root", str(repo), "--base", "HEAD", "--out",
                              str(tmp_path / "b.md"), "--cache", str(tmp_path / "c.json"),
                              "--cache", str(tmp_path / "c.json")])  # fmt: skip
    assert rc == 0
    assert err[:2] == [notice("'report --base'", "'diff --base'"), CACHE_GONE]
    assert err.count(CACHE_GONE) == 1 and not (tmp_path / "c.json").exists()


def test_the_removed_cache_flag_stays_out_of_help(capsys):
    for command in ("scan", "diff"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--cache" not in capsys.readouterr().out
