"""The gates between a GitHub event and a GPU run, pinned field by field: what a refusal carries
(reason, trigger, PR, commit), the fork approval rules, the commit a comment is bound to, the
registry read at that commit, and `/verify-guard`'s own parsing. GitHub's webhook payloads
(tests/fixtures/github/webhooks) as in tests/trigger/test_decide.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from helpers.sharding import shard_count

from ci_budget.config import Config, parse_config
from ci_budget.models import MatrixRow, Plan
from ci_budget.registry.specs import MAX_LINE_CHARS, Command
from ci_budget.sharding.dispatch import PartitionModel
from ci_budget.trigger.authz import LAPSING, Facts, Need, is_bot, is_fork, registrations_for
from ci_budget.trigger.comment import _time, describe_rows
from ci_budget.trigger.decide import decide
from ci_budget.trigger.rows import (
    GUARD_USAGE,
    MAX_REFS,
    GuardCommand,
    _install,
    check_ref,
    guard_plan,
    parse_guard_command,
    suite_rows,
)
from tests.trigger.test_decide import HEAD, REGS, Pull, R, comment, pull_event, reg

PR_SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"  # pull_request.opened's head


def writer(**kw) -> Facts:
    """What the edge knows once a writer's comment on open PR #1 has been looked up."""
    return Facts(**{"permission": "write", "pull": Pull(), **kw})


def on_comment(body: str, facts: Facts, regs=REGS, config=None):
    return decide("issue_comment", comment(body), facts, regs, config or Config())


# --- /rerun-test: refusals, the pinned commit, the registry there ------------------------------


def test_a_refusal_names_every_refused_spec_in_the_reason():
    plan = on_comment("/rerun-test nope.py test_amd.py", writer())
    assert plan.reason == (
        "`nope.py`: not a registered test file; `test_amd.py`: registered for amd, "
        "not for cuda (the backends this repository runs here)"
    )
    assert (plan.should_run, plan.trigger, plan.pr_number, plan.head_sha) == (
        False, "rerun-test", 1, None,
    )  # fmt: skip


def test_absolute_specs_resolve_inside_the_checkout_both_before_and_after_reading_the_pr():
    root = "/home/runner/work/repo/repo"
    spec = f"{root}/{R}a/test_a.py"
    plan = on_comment(f"/rerun-test {spec}", writer(root=root))
    assert plan.should_run and plan.matrix[0].specs == [R + "a/test_a.py"]
    facts = writer(root=root, read_commits=True, registry=REGS, registry_sha=HEAD)
    plan = on_comment(f"/rerun-test {spec}", facts)
    assert plan.should_run and plan.matrix[0].specs == [R + "a/test_a.py"]
    plan = on_comment(f"/rerun-test {spec}", writer(root="/elsewhere"))
    assert not plan.should_run
    assert plan.reason == f"`{spec}`: an absolute path outside the repository"


def test_a_pull_request_without_a_head_attribute_is_refused():
    pull = SimpleNamespace(number=1, state="open")
    plan = on_comment("/rerun-test test_a.py", writer(pull=pull))
    assert not plan.should_run and plan.reason == "pull request #1 has no head commit"


def test_the_asks_name_the_pull_request_and_the_commit():
    facts = writer()
    assert on_comment(f"/rerun-test@{'a' * 40} test_a.py", facts) == Need("commits", number=1)
    facts = writer(read_commits=True)
    assert on_comment("/rerun-test test_a.py", facts) == Need("registry", sha=HEAD)
    facts = Facts(permission="write")
    assert on_comment("/rerun-test test_a.py", facts) == Need("pull", number=1)


def test_specs_are_refused_against_the_registry_at_the_pinned_commit():
    # The checkout registers test_a.py; the PR's commit no longer does.
    facts = writer(read_commits=True, registry=REGS[1:], registry_sha=HEAD)
    plan = on_comment("/rerun-test test_a.py", facts)
    assert not plan.should_run and plan.matrix == []
    assert plan.reason == "`test_a.py`: not a registered test file"
    assert (
        plan.reply
        == "@Codertocat `/rerun-test` refused:\n- `test_a.py`: not a registered test file\n"
    )


def test_the_registry_read_must_be_the_one_at_the_pinned_commit():
    other = "f" * 40
    facts = SimpleNamespace(
        read_commits=True, registry_error=None, registry=REGS, registry_sha=other
    )
    assert registrations_for(HEAD, facts, []) == ("need", None)
    facts.registry, facts.registry_sha = None, HEAD
    assert registrations_for(HEAD, facts, []) == ("need", None)
    facts.registry = REGS[:1]
    assert registrations_for(HEAD, facts, []) == (REGS[:1], None)
    facts.read_commits = False
    assert registrations_for(HEAD, facts, REGS[1:2]) == (REGS[1:2], None)


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("2019-05-15T15:20:21Z", 1557933621),
        ("2019-05-15T17:20:21+02:00", 1557933621),
        ("2019-05-15T15:20:21", None),  # no time zone: not comparable with GitHub's times
        ("2019-05-15T15:20:21.5Z", None),
        ("2019-05-15", None),
        ("", None),
        (None, None),
        (1557933621, None),
    ],
)
def test_timestamps_are_githubs_form_with_a_zone(text, seconds):
    parsed = _time(text)
    assert (parsed.timestamp() if parsed else None) == seconds


def test_a_head_pushed_at_another_offset_before_the_comment_runs():
    plan = on_comment(
        "/rerun-test test_a.py", writer(pull=Pull(head_pushed_at="2019-05-15T17:20:20+02:00"))
    )
    assert plan.should_run and plan.head_sha == HEAD


def test_the_refusal_of_an_unproven_head_says_when_it_was_pushed():
    plan = on_comment(
        "/rerun-test test_a.py", writer(pull=Pull(head_pushed_at="2019-05-15T15:20:40Z"))
    )
    assert plan.reason == (
        f"the head of #1, `{HEAD}`, is not provably older than this comment (its branch was "
        f"last pushed at 2019-05-15T15:20:40Z); to run it, comment `/rerun-test@{HEAD} "
        "test_a.py`"
    )
    pull = SimpleNamespace(state="open", head_sha=HEAD)  # no number, no push time
    plan = on_comment("/rerun-test test_a.py", writer(pull=pull))
    assert plan.reason == (
        f"the head of #?, `{HEAD}`, is not provably older than this comment (unknown); "
        f"to run it, comment `/rerun-test@{HEAD} test_a.py`"
    )


@pytest.mark.parametrize(
    "user, bot",
    [({"login": 5, "type": "User"}, False), ({"login": None}, False), ({"type": "Bot"}, True)],
)
def test_is_bot_on_odd_users(user, bot):
    assert is_bot(user) is bot


def test_describe_rows_names_suites_and_shards():
    rows = [
        MatrixRow(name="s 2/3", runner_config="1-gpu", runs_on=["a", "b"], suite="s", partition="1/3"),
        MatrixRow(name="t", runner_config="1-gpu", runs_on=["a"], specs=["x.py", "y.py"], partition="0/1"),
        MatrixRow(name="u", runner_config="2-gpu", runs_on=["c"], suite="u"),
    ]  # fmt: skip
    assert describe_rows(rows) == (
        "- `1-gpu` (runs-on: a, b) shard 1/3: suite `s`\n"
        "- `1-gpu` (runs-on: a): `x.py`, `y.py`\n"
        "- `2-gpu` (runs-on: c): suite `u`\n"
    )


# --- pull requests: what every refusal carries ------------------------------------------------


def pr(data, config=None, facts=None, event="pull_request", regs=REGS):
    return decide(event, data, facts or Facts(permission="admin"), regs, config or Config())


def fields(plan):
    return (plan.should_run, plan.trigger, plan.pr_number, plan.head_sha, plan.matrix)


def test_pull_request_refusals_keep_the_pr_and_its_head():
    none = (False, "none", 2, PR_SHA, [])
    assert fields(pr(pull_event("opened", draft=True))) == none
    assert fields(pr(pull_event("opened", state="closed"))) == none
    assert fields(pr(pull_event("opened", labels=("bug",)))) == none
    assert fields(pr(pull_event("edited"))) == none
    assert fields(pr(pull_event("labeled", label="bug"))) == none
    gates_nothing = parse_config({"github": {"gating-labels": {"run-x": ["no-stage"]}}}, "t")
    plan = pr(pull_event("opened", labels=("run-x",)), gates_nothing)
    assert fields(plan) == (False, "pull-request", 2, PR_SHA, [])


def test_a_label_that_gates_only_unrunnable_suites_says_why():
    regs = [reg("x/test_x.py", runner="9-gpu-x")]
    plan = pr(pull_event("labeled"), regs=regs)
    assert plan.reason == (
        "pull_request labeled: label 'run-ci' gates no runnable suite (suite "
        "'base-b-test-9-gpu-x': runner config '9-gpu-x' is not configured; skipped)"
    )
    assert fields(plan) == (False, "run-ci", 2, PR_SHA, [])


def forked(data):
    data["pull_request"]["head"]["repo"]["full_name"] = "mallory/Hello-World"
    return data


def test_a_fork_on_pull_request_is_refused_with_the_pr_number():
    plan = pr(forked(pull_event("labeled")))
    assert plan.reason == (
        "pull_request labeled: #2 is from a fork, and this run executes the fork's workflow and "
        "code: GPU runs for forks start from pull_request_target (a gating label) or /rerun-test"
    )
    assert fields(plan) == (False, "none", 2, None, [])


def test_a_deleted_fork_is_a_fork():
    data = pull_event("labeled")
    data["pull_request"]["head"]["repo"] = None
    assert is_fork(data)
    assert not pr(data).should_run and "is from a fork" in pr(data).reason
    same = pull_event("labeled")
    assert not is_fork(same)
    del same["pull_request"]["base"]["repo"]
    assert is_fork(same)


def test_a_push_to_a_fork_lapses_every_gating_label_it_carries():
    config = parse_config({"github": {"gating-labels": {"run-ci": [], "run-b": ["base-b"]}}}, "t")
    assert LAPSING == ("opened", "synchronize", "reopened")
    for action in LAPSING:
        data = forked(pull_event(action, labels=("run-ci", "bug", "run-b")))
        plan = pr(data, config, event="pull_request_target")
        assert plan.reason == (
            f"pull_request_target {action}: #2 is from a fork and {PR_SHA[:10]} was pushed "
            "after the approval (run-ci, run-b); it needs a new one"
        )
        assert fields(plan) == (False, "pull-request", 2, None, [])
        assert plan.unlabel == ["run-ci", "run-b"]
        assert plan.notice == (
            f"**ci-budget**: `{PR_SHA}` is new on this pull request from a fork. A label "
            "approves the commit it was applied on, so `run-ci`, `run-b` no longer runs "
            "anything here and was removed. To run this commit on the GPU runners, a "
            "maintainer applies `run-ci`, `run-b` again, or comments "
            f"`/rerun-test@{PR_SHA} SPEC…`."
        )


def test_the_registry_at_a_forks_approved_commit_that_cannot_be_read_runs_nothing():
    facts = Facts(permission="admin", read_commits=True, registry_error="git fetch failed")
    plan = pr(forked(pull_event("labeled")), facts=facts, event="pull_request_target")
    assert plan.reason == (
        f"pull_request_target labeled: could not read the registrations at `{PR_SHA[:12]}`: "
        "git fetch failed"
    )
    assert fields(plan) == (False, "run-ci", 2, None, [])


# --- shard counts from a partition model ------------------------------------------------------

SGLANG_RULE = {"planner": {"shard-rule": "sglang"}, "stage-timeouts": {"base-b": 10}}


def test_a_partition_models_fit_sizes_label_and_dispatch_runs():
    # 3 x 100 s against 10 min x 0.75 = 450 s: one shard; the fit's 3x slope makes it 900 s.
    regs = [reg(f"b/t{i}.py") for i in range(3)]
    config = parse_config(SGLANG_RULE, "t")
    model = PartitionModel(fit={"base-b-test-1-gpu-large": (3.0, 0.0)})
    assert [r.partition for r in pr(pull_event(), config, regs=regs).matrix] == ["0/1"]
    plan = pr(pull_event(), config, Facts(permission="admin", model=model), regs=regs)
    assert [r.partition for r in plan.matrix] == ["0/2", "1/2"]
    facts = Facts(suites=["base-b-test-1-gpu-large"], model=model)
    plan = decide(None, None, facts, regs, config)
    assert [r.partition for r in plan.matrix] == ["0/2", "1/2"]


# --- /verify-guard ----------------------------------------------------------------------------


def test_verify_guard_parse_results_by_value():
    parse = parse_guard_command
    assert parse("/verify-guard test_a.py 1a2b3c4d x.diff\nsecond line\nthird") == GuardCommand(
        "test_a.py", ["1a2b3c4d", "x.diff"]
    )
    assert parse("/verify-guard@ABCDEF0 test_a.py 1a2b3c4") == GuardCommand(
        "test_a.py", ["1a2b3c4"], [], "abcdef0"
    )
    bad = parse("/verify-guard@xyz test_a.py 1a2b3c4")
    assert (bad.file, bad.refs, bad.sha, len(bad.problems)) == ("", [], None, 1)
    assert bad.problems[0] == "`@xyz` is not a commit SHA (7 to 40 hex characters)"
    assert parse("/verify-guard@abcdef0 test_a.py") == GuardCommand(
        "", [], [f"give a file and at least one fix; usage: {GUARD_USAGE}"], "abcdef0"
    )
    for body in (
        "\x0c/verify-guard t.py 1a2b3c4",
        "X/verify-guard t.py 1a2b3c4",
        "\r/verify-guard t.py 1a2b3c4",
    ):
        assert parse(body) is None
    assert parse("/verify-guard test_a.py 1a2b3c4X").problems == [
        "`1a2b3c4X`: not a commit (7-40 hex digits) or a repository path to a .patch"
    ]


def test_verify_guard_line_length_both_sides():
    head = "/verify-guard@abcdef0 test_a.py"
    line = head + " " * (MAX_LINE_CHARS - len(head) - len(" 1a2b3c4")) + " 1a2b3c4"
    assert len(line) == MAX_LINE_CHARS == 2000
    assert parse_guard_command(line) == GuardCommand("test_a.py", ["1a2b3c4"], [], "abcdef0")
    assert parse_guard_command(line + "\x0c") == GuardCommand(
        "", [], ["the command line is 2001 characters; at most 2000"], "abcdef0"
    )


def test_verify_guard_fix_count_both_sides():
    refs = [f"{i}a2b3c4" for i in range(MAX_REFS + 1)]
    assert MAX_REFS == 5
    assert parse_guard_command(f"/verify-guard t.py {' '.join(refs[:5])}").problems == []
    assert parse_guard_command(f"/verify-guard t.py {' '.join(refs)}").problems == [
        "6 fixes given; at most 5"
    ]


@pytest.mark.parametrize(
    "ref, why",
    [
        ("1a2b3c4", None),
        ("fixes/a.patch", None),
        ("fixes/a.diff", None),
        ("/abs/a.patch", "not a commit (7-40 hex digits) or a repository path to a .patch"),
        ("a/../b.patch", "not a commit (7-40 hex digits) or a repository path to a .patch"),
        ("a.DIFF", "not a commit (7-40 hex digits) or a repository path to a .patch"),
        ("-a.patch", "starts with '-' (that would read as an option)"),
    ],
)
def test_check_ref(ref, why):
    assert check_ref(ref) == (None if why is None else f"`{ref}`: {why}")


def test_an_empty_guard_command_asks_the_gate_for_no_spec():
    guard = GuardCommand("", [], ["why"], "abcdef0")
    assert guard.as_rerun() == Command([], ["why"], "abcdef0")


def test_verify_guard_rows_and_reason_name_the_command_once():
    config = parse_config({"runner-configs": {"rerun-test": {"runs-on": ["gpu"]}}}, "t")
    regs = [reg("g/test_g.py", runner="rerun-test")]
    plan = on_comment("/verify-guard test_g.py 1a2b3c4", writer(), regs, config)
    assert [r.name for r in plan.matrix] == ["verify-guard rerun-test"]
    assert plan.reason == (
        f"/verify-guard by Codertocat: 1 spec on rerun-test at {HEAD[:10]}; reverting `1a2b3c4`"
    )
    assert plan.reply == (
        f"@Codertocat verifying `test_g.py` with `1a2b3c4` reverted at `{HEAD}` (#1), then as "
        f"it is:\n- `rerun-test` (runs-on: gpu): `{R}g/test_g.py`\n"
    )


def test_a_guard_plan_without_a_reply_lists_no_rows():
    row = MatrixRow(name="rerun-test", runner_config="rerun-test", runs_on=["gpu"])
    plan = Plan(reason="/rerun-test by Codertocat", matrix=[row], head_sha=HEAD, pr_number=1)
    guard_plan(plan, GuardCommand("g/test_g.py", ["1a2b3c4"]), "Codertocat")
    assert plan.reply == (
        f"@Codertocat verifying `g/test_g.py` with `1a2b3c4` reverted at `{HEAD}` (#1), then as "
        "it is:\n"
    )
    assert (row.name, row.revert) == ("verify-guard", ["1a2b3c4"])


# --- matrix rows ------------------------------------------------------------------------------


def test_suite_rows_carry_the_backend_and_the_shards_that_run_at_once():
    regs = [reg(f"b/t{i}.py", est=2000) for i in range(3)]
    regs += [reg("b/t_amd.py", backend="amd"), reg("c/t_c.py", stage="stage-c")]
    config = parse_config({"github": {"backends": ["cuda", "amd"]}, "max-parallel": 2}, "t")
    rows, notes = suite_rows(regs, config)
    assert notes == []
    assert [(r.name, r.suite, r.backend, r.partition, r.max_parallel) for r in rows] == [
        ("base-b-test-1-gpu-large 1/3", "base-b-test-1-gpu-large", None, "0/3", 2),
        ("base-b-test-1-gpu-large 2/3", "base-b-test-1-gpu-large", None, "1/3", 2),
        ("base-b-test-1-gpu-large 3/3", "base-b-test-1-gpu-large", None, "2/3", 2),
        ("stage-c-test-1-gpu-large", "stage-c-test-1-gpu-large", "cuda", "0/1", 1),
    ]


def test_suite_rows_carry_their_own_runner_configs_install_script():
    runner = {"runs-on": ["gpu-2"], "install": "ci/install.sh"}
    config = parse_config({"runner-configs": {"2-gpu-large": runner}}, "t")
    regs = [reg("a/test_a.py"), reg("b/test_b.py", runner="2-gpu-large")]
    rows, notes = suite_rows(regs, config)
    assert notes == []
    assert sorted((r.runner_config, r.install) for r in rows) == [
        ("1-gpu-large", None),
        ("2-gpu-large", "ci/install.sh"),
    ]


def test_no_runner_config_or_an_unknown_one_installs_nothing():
    assert _install(Config(), None) is None
    assert _install(Config(), "no-such-runner") is None


def test_shard_count_reads_the_suites_own_settings():
    regs = [reg(f"b/t{i}.py") for i in range(3)]
    config = parse_config({"suite-shards": {"base-b-test-1-gpu-large": 4}}, "t")
    assert shard_count(regs, config) == 4
    assert shard_count(regs, Config()) == 1


@pytest.mark.parametrize(
    "ref, ok",
    [("1a2b3c", False), ("1A2B3C4", True), ("f" * 40, True), ("f" * 41, False), ("1a2b3g4", False)],
)
def test_a_fix_commit_is_7_to_40_hex_digits(ref, ok):
    assert (check_ref(ref) is None) is ok
    guard = parse_guard_command(f"/verify-guard@{ref} t.py 1a2b3c4")
    assert (guard.sha == ref.lower() and guard.problems == []) is ok
