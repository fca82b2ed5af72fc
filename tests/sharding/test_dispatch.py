"""Dispatch as sglang's compute_partitions.py: per-suite timeouts, the ceil(coeff·Σ/(0.75·T − bias))
shard rule, pinned counts, max_parallel, partition-model fits, and the gating label running the
per-commit suites only. Synthetic registrations and a synthetic sglang-shaped tree."""

import json

from helpers.registry import reg

from ci_budget.config import parse_config
from ci_budget.sharding.dispatch import dispatch, parse_model
from tests.sglang_tree import make_tree
from tests.trigger.test_plan_cli import _pr_event, run_plan


def model_from_json(data):
    return parse_model(data)[0]


SGLANG_LIKE = {
    "planner": {"shard-rule": "sglang"},
    "suite-timeouts": {"base-b-test-1-gpu-large": 10, "base-a-test-cpu": 10},
    "suite-runners": {"base-a-test-cpu": "cpu"},
    "suite-shards": {"base-a-test-1-gpu-large": 1},
    "max-parallel": "third-gpu",
    "github": {"backends": ["cuda", "cpu"]},
}


def sizes(regs, settings=SGLANG_LIKE, model=None, patterns=None):
    plans, notes = dispatch(regs, parse_config(settings, "t"), patterns, model=model)
    return {p.suite: (p.size, p.max_parallel) for p in plans}, notes


def gpu_suite(n, est=450):  # 0.75 x 10 min = 450 s a shard
    return [reg(f"f{i}.py", est, "base-b-test-1-gpu-large") for i in range(n)]


def test_shards_from_the_suite_timeout_and_max_parallel_a_third():
    got, _ = sizes(gpu_suite(12))
    assert got == {"base-b-test-1-gpu-large": (12, 4)}
    got, _ = sizes(gpu_suite(12, est=451))  # 12 x 451 / 450 -> 13 > 12 files: capped, noted
    assert got["base-b-test-1-gpu-large"] == (12, 4)


def test_cpu_suites_unthrottled_unless_the_rule_is_third():
    cpu = [reg(f"c{i}.py", 450, "base-a-test-cpu", backend="cpu") for i in range(6)]
    assert sizes(cpu)[0] == {"base-a-test-cpu": (6, 6)}
    assert sizes(cpu, {**SGLANG_LIKE, "max-parallel": "third"})[0] == {"base-a-test-cpu": (6, 2)}


def test_pinned_count_runs_unthrottled():
    regs = [reg(f"p{i}.py", 900, "base-a-test-1-gpu-large") for i in range(5)]
    assert sizes(regs)[0] == {"base-a-test-1-gpu-large": (1, 1)}


def test_nightly_disabled_and_other_backends_do_not_count():
    regs = gpu_suite(3) + [
        reg("n.py", 4000, "base-b-test-1-gpu-large", nightly=True),
        reg("d.py", 4000, "base-b-test-1-gpu-large", disabled="flaky"),
        reg("amd.py", 4000, "base-b-test-1-gpu-large", backend="amd"),
    ]
    assert sizes(regs)[0] == {"base-b-test-1-gpu-large": (3, 1)}


def test_partition_model_fit_and_est_size_the_suite():
    model = model_from_json({
        "est": {"base-b-test-1-gpu-large": {"f0.py": 4050}},
        "fit": {"base-b-test-1-gpu-large": {"coeff": 1.0, "bias": 0}},
    })  # fmt: skip
    assert sizes(gpu_suite(12), model=model)[0]["base-b-test-1-gpu-large"][0] == 12
    plans, _ = dispatch(gpu_suite(12), parse_config(SGLANG_LIKE, "t"), weights=model.weights())
    assert plans[0].total == 4050 + 11 * 450 and plans[0].size == 12
    biased = model_from_json({"fit": {"base-b-test-1-gpu-large": {"coeff": 0.5, "bias": 150}}})
    # 0.5 x 12 x 450 / (450 - 150) = 9
    assert sizes(gpu_suite(12), model=biased)[0]["base-b-test-1-gpu-large"] == (9, 3)
    noise = model_from_json({"fit": {"base-b-test-1-gpu-large": {"coeff": -2, "bias": 9999}}})
    assert sizes(gpu_suite(12), model=noise)[0]["base-b-test-1-gpu-large"] == (12, 4)


def test_label_patterns_select_suites_and_globs():
    regs = gpu_suite(1) + [reg("c.py", 5, "base-a-test-cpu", backend="cpu"),
                           reg("w.py", 5, "weekly-test-1-gpu-large")]  # fmt: skip
    assert set(sizes(regs, patterns=["base-*"])[0]) == {
        "base-b-test-1-gpu-large",
        "base-a-test-cpu",
    }
    assert set(sizes(regs, patterns=["weekly"])[0]) == {"weekly-test-1-gpu-large"}


def test_run_ci_on_an_sglang_tree_dispatches_its_per_commit_suites(tmp_path):
    root = make_tree(tmp_path / "repo", {
        "test/registered/a.py": 'register_cuda_ci(est_time=400, stage="base-b", runner_config="1-gpu-large")',
        "test/registered/b.py": 'register_cuda_ci(est_time=400, stage="base-b", runner_config="1-gpu-large")',
        "test/registered/c.py": 'register_cuda_ci(est_time=100, stage="base-c", runner_config="4-gpu-gb300")',
        "test/registered/n.py": 'register_cuda_ci(est_time=100, stage="nightly", runner_config="1-gpu-large")',
        "test/registered/cpu.py": 'register_cpu_ci(60, "base-a-test-cpu")',
        "test/registered/amd.py": 'register_amd_ci(60, stage="base-b", runner_config="2-gpu-large")',
    })  # fmt: skip
    (root / ".git").mkdir()
    # who applied the label: granted by the base branch's permission file (read on
    # pull_request_target only), so no API call is needed
    grant = {"Codertocat": {"can_tag_run_ci_label": True, "cooldown_interval_minutes": 0}}
    (root / ".github" / "CI_PERMISSIONS.json").write_text(json.dumps(grant))
    proc, out = run_plan(root, "pull_request_target", _pr_event("labeled", ["run-ci"], "run-ci"))
    rows = json.loads(out["matrix"])["include"]
    assert [(r["suite"], r["partition"], r["runs_on"], r["backend"], r["max_parallel"]) for r in rows] == [
        ("base-a-test-cpu", "0/1", ["ubuntu-latest"], "cpu", 1),
        ("base-b-test-1-gpu-large", "0/2", ["1-gpu-h100"], "cuda", 1),  # 800 / (0.75 x 600)
        ("base-b-test-1-gpu-large", "1/2", ["1-gpu-h100"], "cuda", 1),
        ("base-c-test-4-gpu-gb300", "0/1", ["4-gpu-gb300"], "cuda", 1),
    ]  # fmt: skip
    assert json.loads(out["max-parallel"]) == {
        "base-a-test-cpu": 1, "base-b-test-1-gpu-large": 1, "base-c-test-4-gpu-gb300": 1,
    }  # fmt: skip
    assert out["max-parallel-total"] == "3"
    assert "warning" not in proc.stderr, proc.stderr


def test_static_report_shards_a_suite_as_the_label_dispatches_it():
    from ci_budget.budget.impact import suite_impacts

    config = parse_config(SGLANG_LIKE, "t")
    head = [reg(f"c{i}.py", 450, "base-a-test-cpu", backend="cpu") for i in range(3)]
    head.append(reg("n.py", 4000, "base-a-test-cpu", backend="cpu", nightly=True))
    [impact] = suite_impacts([], head, {("cpu", "base-a-test-cpu")}, config)
    plans, _ = dispatch(head, config)
    assert impact.shards_after == plans[0].size == 3  # the nightly file does not count
    assert impact.timeout_s == 10 * 60 and impact.runner_config == "cpu"


SUITE = "base-b-test-1-gpu-large"


def fit(coeff, bias):
    return model_from_json({"fit": {SUITE: {"coeff": coeff, "bias": bias}}})


def test_the_shard_rule_at_its_boundaries_sizes_and_notes_exactly():
    config = parse_config(SGLANG_LIKE, "t")
    # Σ exactly two shard budgets (4 x 225 = 2 x 450): two shards, no bias without a model.
    assert sizes(gpu_suite(4, est=225))[0][SUITE] == (2, 1)
    # ceil(Σ / budget) equal to the file count is a fit, not a capped suite: no note.
    plans, notes = dispatch(gpu_suite(2), config)
    assert (plans[0].size, plans[0].files, plans[0].note, notes) == (2, 2, None, [])
    assert plans[0].timeout_s == 600 and plans[0].total == 900
    pinned = [reg(f"p{i}.py", 900, "base-a-test-1-gpu-large") for i in range(5)]
    plans, notes = dispatch(pinned, config)
    assert (plans[0].size, plans[0].note, notes) == (1, None, [])
    # One shard budget more than the files: capped at one file a shard, and said.
    plans, notes = dispatch(gpu_suite(2, est=451), config)
    assert plans[0].size == 2 and notes == [plans[0].note]
    assert notes[0].startswith(f"{SUITE}: needs 3 shards for 2 file(s)")


def test_a_fit_bias_that_leaves_no_shard_budget_runs_one_file_a_shard():
    config = parse_config(SGLANG_LIKE, "t")
    plans, notes = dispatch(gpu_suite(3), config, model=fit(1.0, 450))  # 0.75 x 600 - 450 = 0
    assert plans[0].size == 3 and notes == [f"{SUITE}: fit bias 450s leaves no shard budget; "
                                            "one file a shard"]  # fmt: skip
    plans, notes = dispatch(gpu_suite(3), config, model=fit(1.0, 449.5))  # half a second left
    assert plans[0].size == 3 and notes[0].startswith(f"{SUITE}: needs 2700 shards")
