"""Selection of what `ci-budget run` runs: specs, suites, partitions. No processes here."""

import json
from pathlib import Path

import pytest
from helpers.registry import reg

from ci_budget.models import FileResult, RunResults
from ci_budget.results.printed import timings_block
from ci_budget.runner.run import resolve_path
from ci_budget.sharding.select import SelectionError, lpt, parse_spec
from ci_budget.sharding.select import select_jobs as select


def select_jobs(registrations, root, suites=(), specs=(), partition=None, **kw):
    """(jobs, skipped) with paths resolved under `root`, as `ci-budget run` does."""
    found = select(
        registrations, suites, specs, partition, resolve=lambda p: resolve_path(p, root), **kw
    )
    return found.jobs, found.skipped


SUITE = "base-b-test-1-gpu-large"


@pytest.fixture
def root(tmp_path):
    for name in ("a", "b", "c", "d", "e", "off"):
        path = tmp_path / "test" / "registered" / f"test_{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# test\n")
    return tmp_path


def regs():
    p = "test/registered/test_{}.py".format
    return [
        reg(p("a"), 300), reg(p("b"), 200), reg(p("c"), 150), reg(p("d"), 120), reg(p("e"), 40),
        reg(p("a"), 500, suite="stage-c-test-1-gpu-large"),
        reg(p("off"), 60, disabled="flaky on H200"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("t/x.py", ("t/x.py", None)),
        ("t/x.py::TestA", ("t/x.py", "::TestA")),
        ("t/x.py::TestA::test_1", ("t/x.py", "::TestA::test_1")),
        ("t/x.py::TestA.test_1", ("t/x.py", "::TestA::test_1")),
        ("t/x.py::test_p", ("t/x.py", "::test_p")),
    ],
)
def test_parse_spec(spec, expected):
    assert parse_spec(spec) == expected


@pytest.mark.parametrize("bad", ["::TestA", "t/x.py::"])
def test_parse_spec_rejects(bad):
    with pytest.raises(SelectionError, match="expected path"):
        parse_spec(bad)


def test_parse_spec_names_follow_the_rerun_test_rules():
    with pytest.raises(SelectionError, match="not a Python identifier"):
        parse_spec("t/x.py::test_p[a.b]")


def test_suite_selection_longest_first_and_disabled_reported(root):
    jobs, skipped = select_jobs(regs(), root, suites=[SUITE])
    assert [j.est_time for j in jobs] == [300, 200, 150, 120, 40]
    assert [(f.path, f.suite, f.reason) for f in skipped] == [
        ("test/registered/test_off.py", SUITE, "flaky on H200")
    ]


def test_file_in_two_selected_suites_runs_once_with_largest_est(root):
    jobs, _ = select_jobs(regs(), root, suites=[SUITE, "stage-c-test-1-gpu-large"])
    paths = [j.path for j in jobs]
    assert paths.count("test/registered/test_a.py") == 1
    assert jobs[0].est_time == 500 and jobs[0].suite == "stage-c-test-1-gpu-large"


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_partition_matches_planner_lpt(root, count):
    items = [(r.file, r.est_time) for r in regs() if r.suite == SUITE and r.enabled]
    expected = lpt(items, count)
    got = [[j.path for j in select_jobs(regs(), root, [SUITE], partition=(i, count))[0]]
           for i in range(count)]  # fmt: skip
    assert got == expected
    assert sorted(p for shard in got for p in shard) == sorted(p for p, _ in items)


def test_disabled_reported_by_first_shard_only(root):
    assert select_jobs(regs(), root, [SUITE], partition=(0, 2))[1]
    assert not select_jobs(regs(), root, [SUITE], partition=(1, 2))[1]


def test_specs_group_selectors_per_file(root):
    jobs, _ = select_jobs(
        regs(), root,
        specs=["test/registered/test_b.py::TestX.test_1", "test/registered/test_b.py::TestY",
               "test/registered/test_c.py", "test/registered/test_c.py::TestZ"],
    )  # fmt: skip
    by = {j.path: j.selection for j in jobs}
    assert by == {
        "test/registered/test_b.py": ["::TestX::test_1", "::TestY"],
        "test/registered/test_c.py": [],  # the whole file was asked for
    }


def test_errors_name_what_was_asked(root):
    with pytest.raises(SelectionError, match="unknown suite 'nope'"):
        select_jobs(regs(), root, suites=["nope"])
    with pytest.raises(SelectionError, match="'test/registered/missing.py': no such file"):
        select_jobs(regs(), root, specs=["test/registered/missing.py"])
    (root / "test" / "helper.py").write_text("")
    with pytest.raises(SelectionError, match="test/helper.py is not a registered test file"):
        select_jobs(regs(), root, specs=["test/helper.py::TestA"])
    with pytest.raises(SelectionError, match="nothing selected"):
        select_jobs(regs(), root)
    with pytest.raises(SelectionError, match="in suite"):
        select_jobs(regs(), root, suites=["stage-c-test-1-gpu-large"],
                    specs=["test/registered/test_b.py"])  # fmt: skip


def test_timings_block_is_sglang_format():
    # run_suite.py: whole seconds; a timed-out file's time is its limit; files never run
    # (after a failure, fail-fast) are left out
    files = [
        FileResult(path="a.py", status="passed", elapsed=12.54),
        FileResult(path="b.py", status="timeout", elapsed=3.2, timeout=3.0),
        FileResult(path="c.py", status="not-run"),
    ]
    assert timings_block(files) == (
        "========== TIMINGS BEGIN ==========\n"
        '{"file": "a.py", "passed": true, "elapsed": 13}\n'
        '{"file": "b.py", "passed": false, "elapsed": 3}\n'
        "========== TIMINGS END ==========\n"
    )


def test_checked_in_schema_is_up_to_date():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    schema = json.loads((root / "docs" / "results.schema.json").read_text())
    assert {k: v for k, v in schema.items() if k != "$schema"} == RunResults.model_json_schema()
    done = subprocess.run(
        [sys.executable, str(root / "scripts" / "gen_schema.py"), "--check"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
