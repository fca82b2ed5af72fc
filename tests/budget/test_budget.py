"""Budget comparison: status rules at the boundaries, suggestions, joins, merges, ordering."""

from __future__ import annotations

import json

import pytest
from helpers.registry import reg

from ci_budget.budget.status import budget_status, build_report, worst_status
from ci_budget.budget.suggest import suggested_value
from ci_budget.config import Config, Thresholds
from ci_budget.models import (
    ClassTiming,
    FileResult,
    Problem,
    RegistryScan,
    RunMeta,
    RunResults,
)
from ci_budget.workspace.files import ResultsError, load_results

SUITE = "base-b-test-1-gpu-large"
CONFIG = Config()


def result(path, elapsed, status="passed", suite=SUITE, **kw):
    return FileResult(path=path, suite=suite, elapsed=elapsed, status=status, **kw)


def run(*files, suites=(SUITE,), **meta):
    return RunResults(meta=RunMeta(suites=list(suites), **meta), files=list(files))


def one(est, elapsed, status="passed", config=CONFIG, **kw):
    report = build_report(
        [reg("t/a.py", est)], [run(result("t/a.py", elapsed, status, **kw))], config
    )
    assert len(report.lines) == 1
    return report.lines[0]


@pytest.mark.parametrize(
    ("elapsed", "status"),
    [
        (790.01, "over"),
        (790, "near"),  # ratio exactly 1.0 is not over
        (632.01, "near"),
        (632, "ok"),  # ratio exactly 0.8 is not near
        (395, "ok"),  # exactly 0.5 is not stale
        (394.99, "stale"),
    ],
)
def test_status_boundaries(elapsed, status):
    line = one(790, elapsed)
    assert line.status == status
    assert line.file_status == "passed"
    assert line.measured == elapsed
    assert line.ratio == pytest.approx(elapsed / 790)
    assert line.headroom == pytest.approx(790 - elapsed)


def test_file_status_beats_ratio():
    assert one(790, 10, "timeout", timeout=1900).status == "timeout"
    assert one(790, 10, "failed").status == "failed"
    assert one(790, 2000, "crashed").status == "failed"
    line = one(790, 0, "not-run")
    assert (line.status, line.measured, line.ratio, line.suggestion) == (
        "not-run",
        None,
        None,
        None,
    )


def test_custom_thresholds():
    config = Config(thresholds=Thresholds(near=0.9, over=1.1, stale=0.2, margin=0.5, round_to=60))
    assert budget_status("passed", 1.05, config) == "near"
    assert budget_status("passed", 1.11, config) == "over"
    assert budget_status("passed", 0.3, config) == "ok"
    assert budget_status("passed", 0.19, config) == "stale"
    assert suggested_value(100, config.thresholds) == 180  # 150 rounded up to a multiple of 60


def test_suggestion_rounds_up_and_is_exact_on_multiples():
    t = CONFIG.thresholds
    assert suggested_value(100, t) == 120  # 100 * 1.2 is 120.00000000000001 in floats
    assert suggested_value(100.01, t) == 130
    assert suggested_value(901, t) == 1090  # 1081.2 -> 1090
    assert one(790, 900).suggestion == 1080  # exact multiple stays
    assert one(790, 700).suggestion is None  # near: 840 is only 6 % more (the 30 s / 30 % rule)
    assert one(100, 140).suggestion == 170  # over by enough to clear the rule
    assert one(790, 100).suggestion == 120  # stale: shrink the budget
    assert one(790, 500).suggestion is None  # ok
    assert one(790, 900, "failed").suggestion is None


def test_timeout_suggestion_uses_the_limit_as_lower_bound():
    line = one(790, 1500.0, "timeout", timeout=1800.0, in_flight="t/a.py::T::test_x")
    assert line.suggestion == 2160  # from the 1800s limit, not the 1500s elapsed
    assert "lower bound" in line.message
    assert line.in_flight == "t/a.py::T::test_x"


def test_gpus_from_runner_config():
    regs = [reg("t/a.py", 100, "base-b-test-8-gpu-h200")]
    report = build_report(regs, [run(result("t/a.py", 50, suite="base-b-test-8-gpu-h200"))], CONFIG)
    assert report.lines[0].gpus == 8
    assert report.lines[0].gpu_seconds == 400
    assert report.suites[0].gpu_seconds == 400


def test_result_without_suite_uses_meta_and_registration():
    regs = [reg("t/a.py", 100)]
    report = build_report(regs, [run(result("t/a.py", 50, suite=None), suites=())], CONFIG)
    assert (report.lines[0].suite, report.lines[0].est_time) == (SUITE, 100)


def test_unknown_suite_uses_the_largest_registration():
    regs = [reg("t/a.py", 100), reg("t/a.py", 300, "base-c-test-2-gpu-large")]
    report = build_report(regs, [run(result("t/a.py", 250, suite="weird"))], CONFIG)
    line = report.lines[0]
    assert (line.suite, line.est_time, line.status) == ("weird", 300, "near")
    assert any("weird" in n and "base-c-test-2-gpu-large" in n for n in report.notes)


def test_unregistered_file_is_kept_with_a_warning():
    report = build_report([reg("t/a.py", 100)], [run(result("t/new.py", 42))], CONFIG)
    (line,) = report.lines
    assert (line.file, line.measured, line.status, line.suggestion) == ("t/new.py", 42, "ok", 60)
    assert [w.file for w in report.warnings] == ["t/new.py"]
    assert "no registration" in report.warnings[0].message


def test_shards_of_one_suite_add_up_and_duplicates_prefer_a_run():
    regs = [reg(f"t/{c}.py", 100) for c in "abcd"]
    shard0 = run(result("t/a.py", 90), result("t/b.py", 50), partition="0/2")
    shard1 = run(result("t/c.py", 120), result("t/d.py", 0, "not-run"), partition="1/2")
    retry = run(result("t/d.py", 70), result("t/c.py", 0, "not-run"))
    report = build_report(regs, [shard0, shard1, retry], CONFIG)
    assert {line.file: line.measured for line in report.lines} == {
        "t/a.py": 90, "t/b.py": 50, "t/c.py": 120, "t/d.py": 70,
    }  # fmt: skip
    (total,) = report.suites
    assert (total.files, total.est_total, total.measured_total) == (4, 400, 330)
    assert (total.over, total.near, total.timeouts, total.failed) == (1, 1, 0, 0)
    assert len(report.meta) == 3


def test_ordering_worst_first_then_ratio_then_path():
    regs = [reg(f"t/{c}.py", 100) for c in "abcdefghi"]
    files = [
        result("t/a.py", 50),  # ok
        result("t/b.py", 150),  # over 1.5
        result("t/c.py", 0, "not-run"),
        result("t/d.py", 120),  # over 1.2
        result("t/e.py", 90),  # near
        result("t/f.py", 10),  # stale
        result("t/g.py", 200, "timeout"),
        result("t/h.py", 5, "failed"),
        result("t/i.py", 150),  # over 1.5, after b by path
    ]
    report = build_report(regs, [run(*files)], CONFIG)
    assert [line.file for line in report.lines] == [
        "t/g.py", "t/b.py", "t/i.py", "t/d.py", "t/h.py", "t/e.py", "t/f.py", "t/a.py", "t/c.py",
    ]  # fmt: skip
    assert worst_status(report) == "timeout"


def test_registry_problems_only_for_files_in_the_results():
    scan = RegistryScan(
        registrations=[reg("t/a.py", 100)],
        errors=[Problem(file="t/a.py", line=5, message="bad"), Problem(file="t/z.py", message="x")],
        warnings=[Problem(file="t/z.py", message="y")],
    )
    report = build_report(scan, [run(result("t/a.py", 10))], CONFIG)
    assert [p.file for p in report.problems] == ["t/a.py"]
    assert report.warnings == []


def test_classes_and_unattributed_are_carried():
    cls = ClassTiming(name="t/a.py::T", class_setup=5, tests=40, class_teardown=1, total=46)
    line = one(100, 50, classes=[cls], unattributed=4)
    assert line.classes == [cls] and line.unattributed == 4


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_load_results_errors_name_the_file_and_key(tmp_path):
    good = write(tmp_path, "good.json", run(result("t/a.py", 1)).model_dump(mode="json"))
    assert load_results([str(good)])[0].files[0].path == "t/a.py"
    bad_json = write(tmp_path, "bad.json", "{not json")
    with pytest.raises(ResultsError, match=r"bad\.json:1:2: not valid JSON"):
        load_results([str(bad_json)])
    newer = write(tmp_path, "newer.json", {"schema_version": 7, "files": []})
    with pytest.raises(ResultsError, match=r"newer\.json: schema_version 7 is not supported"):
        load_results([str(newer)])
    missing = write(tmp_path, "nov.json", {"files": []})
    with pytest.raises(ResultsError, match=r"nov\.json: no schema_version"):
        load_results([str(missing)])
    wrong = write(
        tmp_path, "wrong.json", {"schema_version": 1, "files": [{"path": "a", "elapsed": "x"}]}
    )
    with pytest.raises(ResultsError, match=r"wrong\.json: files\.0\.elapsed: "):
        load_results([str(wrong)])
    with pytest.raises(ResultsError, match=r"nothing-\*\.json: glob matched no files"):
        load_results([str(tmp_path / "nothing-*.json")])
    with pytest.raises(ResultsError, match=r"absent\.json: no such file"):
        load_results([str(tmp_path / "absent.json")])


def test_load_results_glob_is_sorted_and_deduplicated(tmp_path):
    for i in (2, 0, 1):
        write(tmp_path, f"shard-{i}.json", run(result(f"t/{i}.py", i)).model_dump(mode="json"))
    runs = load_results([str(tmp_path / "shard-*.json"), str(tmp_path / "shard-0.json")])
    assert [r.files[0].path for r in runs] == ["t/0.py", "t/1.py", "t/2.py"]


def test_stale_budget_is_never_suggested_upwards():
    from ci_budget.budget.status import build_report
    from ci_budget.config import Config
    from ci_budget.models import FileResult, RunMeta, RunResults

    suite = "base-a-test-1-gpu-large"
    regs = [reg("t/a.py", 5, suite), reg("t/b.py", 600, suite)]
    run = RunResults(
        meta=RunMeta(suites=[suite]),
        files=[
            FileResult(path="t/a.py", suite=suite, elapsed=1.6, status="passed"),
            FileResult(path="t/b.py", suite=suite, elapsed=100.0, status="passed"),
        ],
    )
    lines = {line.file: line for line in build_report(regs, [run], Config()).lines}
    assert lines["t/a.py"].status == "stale" and lines["t/a.py"].suggestion is None
    assert lines["t/b.py"].status == "stale" and lines["t/b.py"].suggestion == 120


def test_cancelled_is_its_own_status_and_says_nothing_about_the_budget():
    line = one(790, 2000, "cancelled", message="cancelled after 2000s (SIGTERM)")
    assert (line.status, line.suggestion) == ("cancelled", None)
    assert (
        worst_status(
            build_report([reg("t/a.py", 790)], [run(result("t/a.py", 5, "cancelled"))], CONFIG)
        )
        == "ok"
    )


def test_timeout_note_does_not_repeat_the_runner_message():
    line = one(
        790, 1800.0, "timeout", timeout=1800.0, message="timed out after 1800s in t/a.py::T::x"
    )
    assert line.message.count("timed out after") == 1
    assert line.message.endswith("est_time=2160 is a lower bound (the real run time is unknown)")
    bare = one(790, 1800.0, "timeout", timeout=1800.0)  # results from elsewhere: say it once
    assert bare.message.startswith("timed out after 1,800s; est_time=2160")
