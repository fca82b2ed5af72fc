"""The one partition-model home: how a model file is read (one line per unusable part, sglang's
fallbacks), the per-file rule every command plans with (model est, else measured p90, else
est_time), and `run` / `plan` / the static report using it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.registry import reg

from ci_budget.history.model import History, JobWall, Sample
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.sharding.dispatch import PlanNumbers, parse_model
from ci_budget.workspace.files import read_model
from tests.history.test_history_weights import SUITE, _cli, _history, _repo

R = "test/registered/"


def test_bad_parts_are_one_line_each_and_fall_back_as_sglang_does():
    model, problems = parse_model(
        {
            "est": {SUITE: {"a.py": 120, "b.py": "slow", "c.py": -4}, "x": [1]},
            "fit": {SUITE: {"coeff": -0.4, "bias": 9000}, "y": {"coeff": 1.2, "bias": 30}},
        },
        "m.json",
    )
    assert problems == [
        f"m.json: est.{SUITE}: 2 value(s) not a number of seconds (first: b.py); "
        "those files use est_time",
        "m.json: est.x is not an object of file -> seconds; ignored",
        f"m.json: fit.{SUITE}: coeff -0.4 is not positive; coeff 1, bias 0",
    ]
    assert model.est == {SUITE: {"a.py": 120.0}} and model.raw_est[SUITE]["a.py"] == 120
    assert model.coeff_bias(SUITE) == (1.0, 0.0) and model.coeff_bias("y") == (1.2, 30.0)
    assert model.coeff_bias("absent") == (1.0, 0.0)
    assert parse_model([1, 2], "m.json") == (
        None,
        ["m.json: not a JSON object; planning on est_time"],
    )


def test_a_truncated_or_missing_model_file_is_one_line(tmp_path: Path):
    path = tmp_path / "model.json"
    path.write_text('{"est": {"s": {"a.py": 1')
    model, problems = read_model(path)
    assert model is None and len(problems) == 1
    assert problems[0].startswith(f"{path}:1:") and "not valid JSON" in problems[0]
    assert read_model(tmp_path / "none.json") == (
        None, [f"{tmp_path / 'none.json'}: no such file; planning on est_time"],
    )  # fmt: skip


def test_per_file_rule_model_then_p90_then_est_time():
    history = History()
    history.add_results(RunResults(meta=RunMeta(suites=[SUITE]), files=[
        FileResult(path="a.py", suite=SUITE, elapsed=300, status="passed"),
        FileResult(path="b.py", suite=SUITE, elapsed=200, status="passed"),
    ]))  # fmt: skip
    model, _ = parse_model(
        {"est": {SUITE: {"a.py": 500}}, "fit": {SUITE: {"coeff": 1.1, "bias": 60}}}
    )
    numbers = PlanNumbers(model=model, history=history)
    assert numbers.seconds("a.py", SUITE, 10) == (500.0, "model")
    assert numbers.seconds("b.py", SUITE, 10) == (200.0, "p90")
    assert numbers.seconds("c.py", SUITE, 10) == (10.0, "est_time")
    assert numbers.wall(SUITE, 1000) == 1160.0  # 1.1 x 1000 + 60
    assert PlanNumbers().weights([reg("a.py", 7)]) == {}  # a.py weighs its own est_time


def _day(d: int) -> datetime:
    return datetime(2026, 6, d, tzinfo=UTC)


def _faster_a() -> History:
    history = History()
    for d, elapsed in enumerate([900, 850, 800, 700, 100, 120, 110], start=1):  # got faster
        history.add_sample("a.py", SUITE, Sample(run=f"r{d}", elapsed=elapsed, status="passed",
                                                 date=_day(d)))  # fmt: skip
    history.add_sample("a.py", SUITE, Sample(run="r9", elapsed=5, status="failed", date=_day(9)))
    return history


def test_shard_wall_is_the_newest_runs_p50_plus_the_median_job_overhead():
    """The predicted shard wall (the rule the walk-forward backtest on sglang's runs checks,
    docs/performance.md): each file's p50 over its newest 5 passing runs + the suite's median
    wall - Σ elapsed; without job walls, no overhead."""
    history = _faster_a()
    # no job walls yet: Σ typical seconds, no overhead (a.py: p50 of 800, 700, 100, 120, 110)
    assert PlanNumbers(history=history).shard_wall(SUITE, [("a.py", 10)]) == 120
    for d, wall in enumerate([400, 350, 330], start=1):  # overheads 100, 50, 30
        history.add_job_wall(JobWall(run=f"j{d}", suite=SUITE, wall=wall, total=300, date=_day(d)))
    assert history.recent("a.py", SUITE) == (120, 7)  # not 700: the p50 of all 7
    assert history.recent_p50("a.py", SUITE) == 120 and history.recent_p50("b.py", SUITE) is None
    assert history.stats("a.py", SUITE).p50 == 700 and history.overhead(SUITE) == 50
    numbers = PlanNumbers(history=history)
    # a.py: 120 s; b.py: nothing measured, its est_time 40 s; + 50 s overhead
    assert numbers.shard_wall(SUITE, [("a.py", 10), ("b.py", 40)]) == 120 + 40 + 50
    assert numbers.typical("a.py", SUITE, 10) == (120.0, "recent")
    assert numbers.typical("b.py", SUITE, 40) == (40.0, "est_time")


def test_a_model_fills_in_where_the_history_is_thin_and_never_overrides_it():
    """With a model: a file with 2+ passing runs keeps its recent p50 (the model's est, a p90
    over sglang's window, does not override it); a file with fewer takes the model's est; the
    model's fit sizes the overhead where the suite has no job walls; once it has, the job
    walls' overhead, not sglang's own prediction (coeff x Σ planned + bias)."""
    history = _faster_a()
    history.add_sample("b.py", SUITE, Sample(run="r1", elapsed=70, status="passed", date=_day(1)))
    model, _ = parse_model({
        "est": {SUITE: {"a.py": 900, "b.py": 95, "c.py": 30}},
        "fit": {SUITE: {"coeff": 1.1, "bias": 60}},
    })  # fmt: skip
    numbers = PlanNumbers(model=model, history=history)
    assert numbers.seconds("a.py", SUITE, 10) == (900.0, "model")  # what sglang dispatches on
    assert numbers.typical("a.py", SUITE, 10) == (120.0, "recent")  # 7 passing runs
    assert numbers.typical("b.py", SUITE, 10) == (95.0, "model")  # one run: not enough
    assert numbers.typical("c.py", SUITE, 10) == (30.0, "model")
    assert numbers.typical("d.py", SUITE, 10) == (10.0, "est_time")
    assert PlanNumbers(history=history).typical("b.py", SUITE, 10) == (70.0, "recent")
    files = [("a.py", 10), ("b.py", 10), ("d.py", 10)]
    assert numbers.shard_wall(SUITE, files) == pytest.approx(1.1 * (120 + 95 + 10) + 60)
    history.add_job_wall(JobWall(run="j1", suite=SUITE, wall=345, total=300, date=_day(1)))
    ours = 120 + 95 + 10 + 45  # the job walls' overhead
    assert numbers.shard_wall(SUITE, files) == ours
    assert PlanNumbers(history=history).shard_wall(SUITE, files) == 120 + 70 + 10 + 45


def _shard0(root: Path, tmp_path: Path, *extra: str) -> tuple[list[str], str]:
    out = tmp_path / "r.json"
    proc = _cli(root, "run", "--suite", SUITE, "--partition", "0/2", "--out", str(out), *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [f["path"] for f in json.loads(out.read_text())["files"]], proc.stderr


@pytest.mark.slow  # three real `run`s
def test_run_takes_the_models_est_over_the_history_and_names_a_suite_it_lacks(tmp_path: Path):
    root = _repo(tmp_path)  # est_time a 100, b 10, c 10
    store = _history(tmp_path / "h.json", {R + "test_b.py": 90})
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"est": {SUITE: {R + "test_c.py": 500}}}))
    # history alone: b 90 beside a 100: a alone in shard 0
    assert _shard0(root, tmp_path, "--history", str(store))[0] == [R + "test_a.py"]
    # model + history: c's 500 s from the model (the history's est_time fallback for c must
    # not hide it), b's 90 from the history: c alone in shard 0
    both, _ = _shard0(root, tmp_path, "--history", str(store), "--partition-model", str(model))
    assert both == [R + "test_c.py"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"est": {"stage-x-test-y": {R + "test_c.py": 500}}}))
    files, err = _shard0(root, tmp_path, "--partition-model", str(other))
    assert files == [R + "test_a.py"]  # est_time, as sglang's run_suite.py falls back
    assert err.splitlines() == [
        f"warning: --partition-model {other}: nothing for suite(s) {SUITE}; their files use "
        "est_time (or measured p90), coeff 1, bias 0"
    ]


def test_plan_with_a_negative_coeff_warns_once_and_sizes_on_coeff_1(tmp_path: Path):
    root = _repo(tmp_path)
    (root / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = 4\n")  # shards fit 180 s
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"fit": {SUITE: {"coeff": -3, "bias": 5000}}}))
    proc = _cli(root, "plan", "--suite", SUITE, "--format", "json", "--partition-model", str(model))
    assert proc.returncode == 0, proc.stderr
    assert [r["partition"] for r in json.loads(proc.stdout)["matrix"]] == ["0/1"]  # 120 s
    assert proc.stderr.splitlines() == [
        f"warning: --partition-model {model}: fit.{SUITE}: coeff -3 is not positive; "
        "coeff 1, bias 0"
    ]


def test_a_whole_model_is_read_as_written_zero_and_fractional_seconds_included():
    data = {
        "est": {"s1": {"a.py": 0, "b.py": 0.5, "c.py": 12}, "s2": {"d.py": 3}},
        "fit": {"s1": {"coeff": 1.5, "bias": 20}, "s2": {"coeff": 2}, "s3": {"bias": 5}},
        "fit_window_start": "2026-06-01",
        "n_runs": 16,
    }
    model, problems = parse_model(data, "m.json")
    assert problems == [] and model is not None and model.source == "m.json"
    assert model.est == {"s1": {"a.py": 0.0, "b.py": 0.5, "c.py": 12.0}, "s2": {"d.py": 3.0}}
    assert model.raw_est == data["est"]
    assert model.fit == {"s1": (1.5, 20.0), "s2": (2.0, 0.0), "s3": (1.0, 5.0)}
    assert (model.fit_window_start, model.n_runs) == ("2026-06-01", 16)
    assert model.seconds("b.py", "s1") == 0.5 and model.seconds("b.py", "s9") is None
    # Without est or fit, and with a window of the wrong types: an empty model, nothing lost.
    model, problems = parse_model({"n_runs": True, "fit_window_start": 5}, "m.json")
    assert problems == [] and model is not None
    assert (model.est, model.fit, model.fit_window_start, model.n_runs) == ({}, {}, None, None)


def test_each_unusable_part_is_one_line_and_the_parts_after_it_are_still_read():
    data = {
        "est": {"s0": [1], "s1": {"a.py": 1, "b.py": float("inf"), "c.py": -1}, "s2": {"d.py": 2}},
        "fit": {
            "s0": 3,
            "s1": {"coeff": "x"},
            "s2": {"bias": "y"},
            "s3": {"coeff": 0},
            "s4": {"coeff": 1, "bias": 2},
        },
    }
    model, problems = parse_model(data, "m.json")
    assert model is not None
    assert problems == [
        "m.json: est.s0 is not an object of file -> seconds; ignored",
        "m.json: est.s1: 2 value(s) not a number of seconds (first: b.py); those files use "
        "est_time",
        "m.json: fit.s0 is not an object; coeff 1, bias 0",
        "m.json: fit.s1: coeff/bias not numbers; coeff 1, bias 0",
        "m.json: fit.s2: coeff/bias not numbers; coeff 1, bias 0",
        "m.json: fit.s3: coeff 0 is not positive; coeff 1, bias 0",
    ]
    assert model.est == {"s1": {"a.py": 1.0}, "s2": {"d.py": 2.0}}
    assert model.fit == {"s4": (1.0, 2.0)}
    _, problems = parse_model({"est": [], "fit": 7}, "m.json")
    assert problems == [
        "m.json: est is not an object of suite -> {file: seconds}; ignored",
        "m.json: fit is not an object of suite -> {coeff, bias}; ignored",
    ]
