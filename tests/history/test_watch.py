"""The budget watch's pure logic on real sglang-ci-stats runs (tests/fixtures/cistats, see its
SOURCES.md): slowest-shard walls and their trend, sustained steps, attribution to commits,
events at one run boundary, est_time against measured p90. Every number asserted was checked
by hand against the run files."""

import json
from pathlib import Path

import pytest

from ci_budget.history import watch as w
from ci_budget.history.cistats import add_run, parse_run
from ci_budget.history.model import History
from ci_budget.models import Registration

RUNS = Path(__file__).parents[1] / "fixtures" / "cistats" / "runs"
B200 = "extra-b-test-4-gpu-b200"
H200 = "extra-b-test-8-gpu-h200"
TOPK = "test/registered/rl/test_return_indexer_topk.py"
MEGAMOE = "test/registered/models_e2e/test_deepseek_v4_flash_fp4_megamoe_b200.py"


def _runs() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(RUNS.glob("*.json"))]


def _history(runs: list[dict]) -> History:
    history = History(1000)
    for data in runs:
        add_run(history, parse_run(data))
    return history


def test_theil_sen_slope_and_sens_interval():
    xs = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    exact = w.theil_sen(xs, [10.0 + 3 * x for x in xs])
    assert (exact.slope, exact.low, exact.high) == (3.0, 3.0, 3.0) and exact.rising
    noisy = w.theil_sen(xs, [10.0, 14.0, 9.0, 13.0, 10.0, 12.0])
    assert noisy.low < 0 < noisy.high and not (noisy.rising or noisy.falling)
    assert w.theil_sen(xs[:3], [1.0, 2.0, 3.0]) is None  # too few points for a trend


def test_slowest_shard_walls_step_trend_and_crossing_on_real_runs():
    history = _history(_runs())
    walls = w.suite_walls(history, B200, {})
    # 06-10 23:33: shard 1 ran 23:49:59 -> 00:10:52 (1,253 s); 06-13 11:38: one shard, 37:57
    assert [int(x) for _, x in walls] == [
        1253, 1270, 1224, 1342, 1312, 2277, 2304, 2370, 2223, 2202, 2637,
    ]  # fmt: skip
    found = w.watch_suite(B200, 3600.0, walls)
    assert found.level == 2223.0 and found.headroom == 1377.0  # median of the last three
    [step] = found.steps  # two shards became one: the slowest shard doubled
    assert (step.before, step.after) == (1270.0, 2277.0)
    assert (step.last_before.run, step.first_after.run) == ("27449134051", "27465703527")
    # the trend is taken since the step (six runs), not across it: no drift left, not at risk
    assert not found.trend.rising and found.trend.low < 0 < found.trend.high
    assert found.crossing is None and not found.at_risk  # 1,377 s is 38 % of 3,600 s
    across = w.theil_sen(list(range(11)), [x for _, x in walls])
    assert across.rising  # what a trend across the step would have claimed
    steady = w.watch_suite(H200, 3600.0, w.suite_walls(history, H200, {}))
    assert not steady.trend.rising and steady.crossing is None and not steady.at_risk


def test_a_sustained_step_is_found_and_a_bimodal_series_is_not():
    history = _history(_runs())
    topk = w.series_runs(history.samples(TOPK, H200))
    assert [int(v) for _, v in topk] == [228, 218, 238, 219, 228, 249, 222, 180, 198, 150, 150]
    [step] = w.find_steps(TOPK, H200, topk)
    assert (step.before, step.after) == (228.0, 165.0)  # medians of five before, four after
    assert step.last_before.sha == "3f4a338212b24864abc5b243fb23c23ad08713ee"
    assert step.first_after.sha == "d72314808faeaa418acd60d1b038550882954a0e"
    megamoe = w.series_runs(history.samples(MEGAMOE, "extra-b-test-deepep-4-gpu-b200"))
    # 241 246 306 232 | 322 243 306 298 319 243: it flips between two levels, never stays
    assert w.find_steps(MEGAMOE, "extra-b-test-deepep-4-gpu-b200", megamoe) == []


def test_imports_and_ci_paths_narrow_a_range():
    source = (
        "import os\nimport sglang\nfrom sglang.srt.utils import kill_process_tree\n"
        "from sglang.test.ci.ci_register import register_cuda_ci\nfrom .local import x\n"
    )
    mods = w.imported_modules(source)
    assert "sglang.srt.utils" in mods and "sglang" not in mods and "os" not in mods
    assert w.imported_modules("def (:") == set()
    commits = [
        w.Commit("a" * 40, "touch the test", (TOPK,)),
        w.Commit("b" * 40, "utils", ("python/sglang/srt/utils/common.py",)),
        w.Commit("c" * 40, "docs", ("docs/index.md", "python/sglang/srt/models/llama.py")),
        w.Commit("d" * 40, "image", ("docker/Dockerfile",)),
        w.Commit("e" * 40, "pin", ("python/pyproject.toml",)),
    ]
    reasons = [w.why(c, TOPK, mods) for c in commits]
    assert reasons == [["file"], ["imports"], [], ["ci"], ["ci"]]


def test_steps_at_one_boundary_are_one_event_with_its_ci_commits():
    runs = _runs()
    for data in runs[-3:]:  # a slower image from 06-16 on: every file of one suite, x 1.5
        for job in data["jobs"]:
            if job["suite"] == "extra-a-test-2-gpu-large":
                for timing in job["timings"]:
                    timing["elapsed"] = round(timing["elapsed"] * 1.5)
    history = _history(runs)
    ci = w.Commit("f" * 40, "bump the image", ("docker/Dockerfile",))
    code = w.Commit("1" * 40, "a model", ("python/sglang/srt/models/llama.py",))
    found = w.watch(history, {}, log=lambda a, b: [ci, code])
    [event] = found.events
    assert event.first_after.run == "27618018607" and event.commits == [ci]
    assert len(event.steps) >= 3 and {s.suite for s in event.steps} == {"extra-a-test-2-gpu-large"}
    assert all(s.event == 0 and s.commits == [ci] and s.range_size == 2 for s in event.steps)


def _reg(file: str, suite: str, est: float, **kw) -> Registration:
    return Registration(file=file, line=3, function="register_cuda_ci", backend="cuda",
                        est_time=est, suite=suite, **kw)  # fmt: skip


def test_est_time_against_measured_p90():
    history = _history(_runs())
    regs = [
        _reg(TOPK, H200, 260.0),  # near the level before its step (228): stale
        _reg(
            MEGAMOE, "extra-b-test-deepep-4-gpu-b200", 900.0
        ),  # nearest-rank p90: 9th of 10, 319: over
        _reg("test/registered/8-gpu-models/test_deepseek_v32_indexcache.py", H200, 450.0),
        _reg(
            "test/registered/rl/test_return_routed_experts.py", "extra-b-test-4-gpu-h100", 380.0
        ),  # p90 400: within 20 % / 30 s  # fmt: skip
        _reg(MEGAMOE, "extra-b-test-deepep-4-gpu-b200", 1.0, disabled="flaky"),
    ]
    steps = w.find_steps(TOPK, H200, w.series_runs(history.samples(TOPK, H200)))
    found = {c.file: c for c in w.check_estimates(regs, history, steps)}
    assert (found[TOPK].verdict, found[TOPK].p90, found[TOPK].n) == ("stale", 198.0, 4)
    assert (found[MEGAMOE].verdict, found[MEGAMOE].p90, found[MEGAMOE].n) == ("over", 319.0, 10)
    index = found["test/registered/8-gpu-models/test_deepseek_v32_indexcache.py"]
    assert (index.verdict, index.p90) == ("under", 634.0)
    assert len(found) == 3


@pytest.mark.parametrize("size", [0, 3])
def test_no_runs_or_too_few_say_no_trend(size: int):
    history = _history(_runs()[:size])
    found = w.watch(history, {B200: 3600.0})
    assert found.steps == [] and all(s.trend is None and not s.at_risk for s in found.suites)


BACKTEST = Path(__file__).parents[1] / "fixtures" / "sglang-ci-stats" / "backtest" / "runs"
PP_KL = "test/registered/radix_cache/unified_radix_tree/test_unified_radix_cache_hicache_pp_kl.py"
GLM5_TP = "test/registered/models_e2e/test_dsa_glm5_tp_mtp.py"
V3_MTP = "test/registered/models_e2e/test_deepseek_v3_mtp.py"


def test_the_24_stage_c_runs_hold_three_file_steps_and_one_shard_merge():
    """The backtest's runs (tests/fixtures/sglang-ci-stats/backtest, 06-10 .. 06-21; docs/watch.md
    lists the steps with their commit ranges): of 49 (file, suite) series three step (a KL test
    moved to a bigger model, 5fb4e2d02 in its range; two 8-GPU H200 model tests faster from
    06-20), and one suite's slowest shard steps when its two shards became one; the files that
    run in two modes do not."""
    history = _history([json.loads(p.read_text()) for p in sorted(BACKTEST.glob("*.json"))])
    series = {k: w.series_runs(history.samples(*k)) for k in history.keys()}
    steps = {s.file: s for (f, suite), runs in series.items() for s in w.find_steps(f, suite, runs)}
    assert len(series) == 49 and sorted(steps) == [V3_MTP, GLM5_TP, PP_KL]
    kl = steps[PP_KL]
    assert (kl.suite, kl.before, kl.after) == ("base-c-test-4-gpu-h100", 585.0, 835.0)
    assert (kl.last_before.run, kl.first_after.run) == ("27482253553", "27497738669")
    # 497-605 s (one 1,116 s) for 15 runs, then 332, 404, 329, 261 s
    assert (steps[GLM5_TP].before, steps[GLM5_TP].after) == (527.0, 330.5)
    assert (steps[V3_MTP].before, steps[V3_MTP].after) == (335.0, 229.5)
    assert steps[GLM5_TP].first_after.run == steps[V3_MTP].first_after.run == "27870064391"
    suite = "base-c-test-deepep-8-gpu-h200"
    found = w.watch_suite(suite, 1800.0, w.suite_walls(history, suite, {}))
    [merged] = found.steps  # 695-790 s as two shards; 954 s, then 968-1,137 s as one
    assert (merged.before, merged.after) == (750.0, 1069.0)
    assert (merged.last_before.run, merged.first_after.run) == ("27497738669", "27548280728")
    assert not found.at_risk and found.headroom == 762.0
