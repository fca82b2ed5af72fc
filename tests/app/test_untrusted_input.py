"""Numbers and paths a PR controls (its registrations, the results and artifacts of a job that
ran its code, the lines its tests print) are a one-line error, never a traceback, and never
reach files outside the checkout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import git

from ci_budget.cli import main

REG = "test/registered"
S = "base-b-test-1-gpu-large"


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    got = capsys.readouterr()
    return rc, got.out, got.err


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


SUITE = 'stage="base-b", runner_config="1-gpu-large"'
GOOD = f"register_cuda_ci(est_time=30, {SUITE})\n"
HUGE = {
    "1e999": "inf",  # a float literal that is infinite
    "9" * 400: "999999999999...",  # an int no float holds
    "1e300": "1e+300",  # finite, but its sums and roundings overflow
}


@pytest.mark.parametrize("literal", list(HUGE))
def test_a_huge_est_time_is_a_registry_error_everywhere(tmp_path, capsys, literal):
    bad = f"register_cuda_ci(est_time={literal}, {SUITE})\n"
    root = str(repo(tmp_path, {f"{REG}/test_bad.py": bad, f"{REG}/test_good.py": GOOD}))
    why = (
        f"{REG}/test_bad.py:1:27: register_cuda_ci(): est_time must be at most 1,000,000 "
        f"seconds, not {HUGE[literal]}"
    )
    rc, _, err = cli(capsys, "scan", "--root", root)
    assert rc == 1 and f"error: {why}" in err.splitlines()
    # plan stops on it, as sglang's compute_partitions.py does: one line, no run, exit 2
    rc, out, err = cli(capsys, "plan", "--root", root, "--suite", S)
    assert rc == 2 and "should-run: false" in out and "Traceback" not in err
    assert f"error: {why}" in err.splitlines()
    rc, out, _ = cli(capsys, "run", "--dry-run", "--root", root, "--suite", S)
    assert rc == 0 and "test_good.py" in out and "test_bad.py" not in out
    rc, out, _ = cli(capsys, "diff", "--root", root, "--base", "HEAD", "--format", "text")
    assert rc == 0 and out


def test_plan_answers_no_run_when_its_decision_breaks(tmp_path, capsys, monkeypatch):
    root = str(repo(tmp_path, {f"{REG}/test_good.py": GOOD}))

    def broken(*args, **kwargs):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr("ci_budget.trigger.decide.decide", broken)
    rc, out, err = cli(capsys, "plan", "--root", root, "--suite", S)
    assert rc == 0
    assert "should-run: false" in out
    assert "reason: plan could not decide (OverflowError); not running" in out
    assert err == "error: plan: OverflowError: cannot convert float infinity to integer\n"


RESULT = {"path": f"{REG}/test_good.py", "suite": S, "elapsed": 12.0, "status": "passed"}
BAD_RESULTS = {
    "negative": ({"elapsed": -5}, "files.0.elapsed: Input should be greater than or equal to 0"),
    "nan": ({"elapsed": float("nan")}, "files.0.elapsed: Input should be a finite number"),
    "inf": ({"elapsed": float("inf")}, "files.0.elapsed: Input should be a finite number"),
    "huge": ({"elapsed": 10**400}, "files.0.elapsed: Input should be a valid number"),
    "long path": ({"path": "a/" * 1_000_000 + "x.py"}, "files.0.path: String should have at most"),
    "class time": (
        {"classes": [{"name": "x::T", "total": float("inf")}]},
        "files.0.classes.0.total: Input should be a finite number",
    ),
}


@pytest.mark.parametrize("case", list(BAD_RESULTS))
def test_a_results_file_with_bad_numbers_or_paths_is_one_line(tmp_path, capsys, case):
    root = str(repo(tmp_path, {f"{REG}/test_good.py": GOOD}))
    change, why = BAD_RESULTS[case]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": 1, "files": [RESULT | change]}))
    rc, out, err = cli(capsys, "report", "--root", root, "--results", str(path))
    assert (rc, out) == (2, "")
    assert err.startswith(f"ci-budget report: {path}: {why}") and err.count("\n") == 1
    store = tmp_path / "h.json"
    rc, _, err = cli(capsys, "history", "add", str(path), "--history", str(store))
    assert rc == 2 and not store.exists() and why in err and "Traceback" not in err


def test_deep_json_is_one_line(tmp_path, capsys):
    root = repo(tmp_path, {f"{REG}/test_good.py": GOOD})
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema_version": 1, "files": ' + "[" * 100_000 + "]" * 100_000 + "}")
    rc, _, err = cli(capsys, "report", "--root", str(root), "--results", str(deep))
    assert (
        rc == 2 and err == f"ci-budget report: {deep}: not a results file: JSON nested too deeply\n"
    )
    # a TIMINGS line a test printed, and a report-log line of the tests' own process
    log = tmp_path / "job.log"
    log.write_text(
        "========== TIMINGS BEGIN ==========\n"
        + '{"file": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
        + json.dumps({"file": f"{REG}/test_good.py", "passed": True, "elapsed": 3.0}) + "\n"
        + "========== TIMINGS END ==========\n"
    )  # fmt: skip
    from ci_budget.results.printed import parse_log

    with log.open() as lines:
        timings = parse_log(lines)
    assert [e.file for e in timings.entries] == [f"{REG}/test_good.py"]
    [problem] = timings.problems
    assert problem.line == 2 and "not JSON (nested too deeply)" in problem.message
    from ci_budget.results.timings import parse_reportlog

    lines = ['{"$report_type": ' + "[" * 100_000 + "]" * 100_000 + "}", "{}"]
    assert parse_reportlog(lines, source="r.jsonl", strict=False).problems == [
        "r.jsonl:1: invalid JSON: nested too deeply"
    ]


GUARD_TABLE = '''"""Measured avg_kl_div:

                          fix reverted          fix
                        SM100    SM90      in place
  #7  test_secret_row    1.0     n/a            0.0
"""
'''


def test_report_reads_no_file_outside_the_checkout(tmp_path, capsys):
    root = repo(tmp_path, {f"{REG}/test_good.py": GOOD})
    (tmp_path / "outside.py").write_text(GUARD_TABLE)
    (root / "link.py").symlink_to(tmp_path / "outside.py")
    results = tmp_path / "r.json"
    files = [RESULT | {"path": p} for p in ("../outside.py", str(tmp_path / "outside.py"))]
    files += [RESULT | {"path": "link.py"}, RESULT | {"path": "a\u0000b.py"}]
    results.write_text(json.dumps({"schema_version": 1, "files": files}))
    rc, out, err = cli(capsys, "report", "--root", str(root), "--results", str(results),
                       "--format", "json")  # fmt: skip
    assert rc == 0, err
    report = json.loads(out)
    assert report["arch_rows"] == [] and "secret" not in out + err


def test_guard_suggest_takes_only_a_plain_path_and_the_verified_file(tmp_path, monkeypatch):
    from ci_budget.app.guard_suggest import GuardSuggestOptions, suggest_bodies
    from ci_budget.app.settings import AppError, Settings
    from ci_budget.config import Config
    from ci_budget.models import GuardVerification

    sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    settings = Settings(tmp_path, config=Config(), environ={})
    path = tmp_path / "verification.json"

    def refused(file: str, given: str | None = None) -> str:
        path.write_text(GuardVerification(file=file, arch="sm90", commit=sha).model_dump_json())
        with pytest.raises(AppError) as err:
            suggest_bodies(settings, GuardSuggestOptions(path, 7, sha, file=given), client=object())
        return str(err.value)

    assert refused("../../../user").endswith(
        "file `../../../user`: not a repository path; nothing posted"
    )
    assert "file `/etc/passwd`: not a repository path" in refused("/etc/passwd")
    assert "file `x.py?ref=main`: contains '?'" in refused("x.py?ref=main")
    assert refused("test/other.py", "test/guard.py").endswith(
        "measures `test/other.py`, not the verified `test/guard.py`; nothing posted"
    )
    path.write_text('{"file": "x.py", "arch": "sm90", "values": [{"case": "c", "reverted": NaN}]}')
    with pytest.raises(AppError, match="values.0.reverted"):
        suggest_bodies(settings, GuardSuggestOptions(path, 7, sha), client=object())


def test_a_hex_revert_ref_is_the_commit_even_beside_a_file_of_that_name(tmp_path):
    from ci_budget.workspace.git import head_worktree, revert

    root = repo(tmp_path, {"state.py": "FIXED = False\n"})
    (root / "state.py").write_text("FIXED = True\n")
    git(root, "commit", "-qam", "The fix")
    fix = git(root, "rev-parse", "HEAD")
    decoy = root / fix[:12]  # what a PR can add at the top of its tree
    decoy.write_text("--- a/other.py\n+++ b/other.py\n@@ -0,0 +1 @@\n+PWNED = 1\n")
    with head_worktree(root) as tree:
        assert revert(tree, fix[:12], root).startswith(f"commit {fix[:12]} The fix")
        assert (tree / "state.py").read_text() == "FIXED = False\n"
        assert not (tree / "other.py").exists()


def test_guard_refill_parses_each_table_a_fixed_number_of_times(monkeypatch):
    """Filling k values into an n-row table reads the table O(1) times, not once per value
    (10 values in 20,000 rows took 28.5 s that way)."""
    import ci_budget.arch.table as fixed
    from ci_budget.arch.fill import fill_values
    from ci_budget.config import Config
    from ci_budget.models import GuardValue

    rows = [
        f"  {'#7' if i == 0 else '  '}  {f'test_{i:04d}':<15}    1.0     n/a            0.0"
        for i in range(300)
    ]
    source = GUARD_TABLE.replace(GUARD_TABLE.split("\n")[4], "\n".join(rows))
    parsed = []
    real = fixed._parse_row
    monkeypatch.setattr(fixed, "_parse_row", lambda *a, **k: parsed.append(1) or real(*a, **k))

    def rows_parsed(k: int) -> int:
        parsed.clear()
        values = [
            GuardValue(group="#7", case=f"test_{i * 7:04d}", reverted=1.5e-06) for i in range(k)
        ]
        new, tables, problems = fill_values(source, "g.py", values, "sm90", Config().gpu_arch_map())
        assert problems == [] and new.count("1.50e-06") == k
        return len(parsed)

    assert rows_parsed(2) == rows_parsed(20)


def test_a_gpu_count_from_an_artifact_is_bounded(tmp_path, capsys):
    root = repo(tmp_path, {f"{REG}/test_good.py": GOOD})
    path = tmp_path / "r.json"
    meta = {"gpu": {"name": "H100", "count": 10**30}}
    path.write_text(json.dumps({"schema_version": 1, "meta": meta, "files": [RESULT]}))
    rc, _, err = cli(capsys, "report", "--root", str(root), "--results", str(path))
    assert rc == 2 and "meta.gpu.count: Input should be less than or equal to 4096" in err


def test_no_traceback_from_the_command_line(tmp_path):
    """The same inputs through the installed entry point: stderr is one line."""
    root = repo(tmp_path, {f"{REG}/test_bad.py": f"register_cuda_ci(est_time=1e999, {SUITE})\n"})
    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "plan", "--root", str(root), "--suite", S],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr  # stopped, as sglang stops
    assert "should-run: false" in proc.stdout and len(proc.stderr.splitlines()) == 1
