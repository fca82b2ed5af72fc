"""The pure authorisation and command rules, pinned by value: CI_PERMISSIONS.json entries of
every shape, each grant for each kind of request, the order of the checks, the command's
parsing and what one label may start."""

from __future__ import annotations

import math

import pytest
from helpers.registry import reg

from ci_budget.config import DEFAULT_RUNNER_CONFIGS, Config, parse_config
from ci_budget.models import MatrixRow
from ci_budget.trigger.authz import (
    LABEL,
    RUN,
    Facts,
    Grant,
    Permissions,
    PermissionsError,
    access,
    definitive,
    granted,
    parse_permissions,
)
from ci_budget.trigger.comment import parse_request
from ci_budget.trigger.rows import (
    allowed_runner_configs,
    label_limits,
    label_rows,
    stages,
)

SOURCE = ".github/CI_PERMISSIONS.json"
R = "test/registered/"


def entry(tag=True, rerun=True, cooldown=0, **extra):
    """An entry as sglang writes them; `can_rerun_failed_ci` is not read."""
    return {"can_tag_run_ci_label": tag, "can_rerun_failed_ci": rerun,
            "cooldown_interval_minutes": cooldown, "reason": "custom override", **extra}  # fmt: skip


# --- CI_PERMISSIONS.json ----------------------------------------------------------------------


def test_entries_are_read_by_case_folded_login():
    perms = parse_permissions({"BBuf": entry(cooldown=60), "x": entry(False, False, 30)})
    assert perms.source == SOURCE and perms.problems == ()
    assert perms.grant("bbuf") == Grant(True, 60.0)
    assert perms.grant("BBUF") == perms.grant("BBuf")
    assert perms.grant("x") == Grant(False, 30.0)
    assert perms.grant("nobody") is None


def test_missing_keys_grant_nothing_and_a_missing_cooldown_is_none():
    assert parse_permissions({"a": {}}).grant("a") == Grant(False, None)
    assert parse_permissions({"a": {"cooldown_interval_minutes": 0.0}}).grant("a") == Grant(
        False, 0.0
    )
    # Keys ci-budget does not read (sglang's can_rerun_failed_ci) neither grant nor refuse.
    assert parse_permissions({"a": {"can_rerun_failed_ci": 1}}).grant("a") == Grant(False, None)


@pytest.mark.parametrize(
    "value, why",
    [
        ("yes", "'a': expected an object, not str"),
        (None, "'a': expected an object, not null"),
        ({"can_tag_run_ci_label": "true"}, "'a': can_tag_run_ci_label is str, not true or false"),
        ({"can_tag_run_ci_label": None}, "'a': can_tag_run_ci_label is null, not true or false"),
        ({"cooldown_interval_minutes": "0"}, "'a': cooldown_interval_minutes is str, not a number"),
        ({"cooldown_interval_minutes": True}, "'a': cooldown_interval_minutes is bool, not a number"),
        ({"cooldown_interval_minutes": -1}, "'a': cooldown_interval_minutes is -1, not a number of minutes >= 0"),
        ({"cooldown_interval_minutes": math.inf}, "'a': cooldown_interval_minutes is inf, not a number of minutes >= 0"),
        ({"cooldown_interval_minutes": math.nan}, "'a': cooldown_interval_minutes is nan, not a number of minutes >= 0"),
    ],
)  # fmt: skip
def test_an_entry_of_the_wrong_shape_grants_nothing_and_says_why(value, why):
    perms = parse_permissions({"a": value, "b": entry()}, "perm.json")
    assert perms.problems == (f"perm.json: {why}; it grants nothing",)
    assert perms.grant("a") is None and perms.grant("b") == Grant(True, 0.0)


@pytest.mark.parametrize("data, kind", [([], "list"), (None, "null"), ("x", "str")])
def test_a_file_that_is_not_an_object_is_refused_whole(data, kind):
    with pytest.raises(PermissionsError) as err:
        parse_permissions(data)
    assert str(err.value) == f"{SOURCE}: expected a JSON object of logins, not {kind}"


def test_the_real_file_shapes_from_sglang_main():
    # Three shapes, as in sglang's file at 3c69a4c (155 x cooldown 0, 88 x 60, 2 x 30).
    perms = parse_permissions({"1pikachu": entry(), "842974287": entry(cooldown=60)})
    assert granted(RUN, perms.grant("1pikachu"))
    assert not granted(RUN, perms.grant("842974287"))
    assert granted(LABEL, perms.grant("842974287"))


# --- the grants -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "what, grant, expect",
    [
        (RUN, Grant(True, 0.0), True),
        (RUN, Grant(True, 60.0), False),
        (RUN, Grant(True, None), False),
        (RUN, Grant(False, 0.0), True),  # cooldown 0 is the /rerun-test grant
        (LABEL, Grant(True, 60.0), True),
        (LABEL, Grant(False, 0.0), False),
        ("unknown", Grant(True, 0.0), False),
        (RUN, None, False),
        (LABEL, None, False),
    ],
)
def test_each_kind_of_request_has_its_own_grant(what, grant, expect):
    assert granted(what, grant) is expect


def facts(permission=None, error=None, grants=None):
    perms = None if grants is None else parse_permissions(grants)
    return Facts(permission=permission, permission_error=error, permissions=perms)


def test_access_checks_deny_allow_file_then_permission_in_that_order():
    config = parse_config({"github": {"allow-users": ["Al"], "deny-users": ["Den"]}}, "t")
    grants = {"den": entry(), "fast": entry(), "slow": entry(cooldown=60)}
    denied = "Den is not allowed to trigger runs here"
    assert access(RUN, "Den", facts("admin", grants=grants), config) == denied
    assert access(RUN, "al", facts(error="x"), config) is None  # allowed without asking
    assert access(RUN, "FAST", facts(error="x", grants=grants), config) is None
    assert access(RUN, "slow", facts(grants=grants), config) == "ask"
    assert access(RUN, "slow", facts(error="HTTP 502", grants=grants), config) == (
        "could not check slow's permission: HTTP 502"
    )
    assert access(RUN, "slow", facts("write", grants=grants), config) is None
    assert access(RUN, "slow", facts("maintain", grants=grants), config) is None


@pytest.mark.parametrize(
    "what, needs",
    [
        (RUN, "runs need admin or write, or cooldown_interval_minutes 0 in " + SOURCE),
        (LABEL, "a gating label counts from admin or write, or can_tag_run_ci_label in " + SOURCE),
    ],
)  # fmt: skip
def test_a_refusal_says_what_would_have_allowed_it(what, needs):
    grants = {"x": entry(False, False, 60)}
    for level in ("read", "triage", "none"):
        assert access(what, "x", facts(level, grants=grants), Config()) == (
            f"x has '{level}' permission; {needs}"
        )


def test_without_a_file_the_refusal_names_only_the_permission():
    assert access(RUN, "x", facts("read"), Config()) == (
        "x has 'read' permission; runs need admin or write"
    )
    config = parse_config({"github": {"allowed-permissions": ["admin"]}}, "t")
    assert access(RUN, "x", facts("write"), config) == ("x has 'write' permission; runs need admin")
    triage = parse_config({"github": {"allowed-permissions": ["read"]}}, "t")
    assert access(RUN, "x", facts("triage"), triage) is None  # triage counts as read


def test_only_refusals_because_of_the_person_are_remembered():
    assert definitive("x has 'read' permission; runs need admin or write")
    assert definitive("x is not allowed to trigger runs here")
    assert not definitive("could not check x's permission: HTTP 502")
    assert not definitive("ask") and not definitive(None) and not definitive("")


# --- the commands -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, name, specs, sha",
    [
        ("/rerun-test x.py y.py", "/rerun-test", ["x.py", "y.py"], None),
        ("\n\n  /rerun-test@ABCDEF0\u200e x.py\nmore", "/rerun-test", ["x.py"], "abcdef0"),
        ("/verify-guard x.py abcdef0", "/verify-guard", ["x.py"], None),
    ],
)
def test_the_command_and_its_guard_check_parse_and_name_their_trigger(body, name, specs, sha):
    request = parse_request(body, 20)
    assert (request.name, request.command.specs, request.command.sha) == (name, specs, sha)
    assert request.trigger == name[1:]
    assert (request.guard is not None) is (name == "/verify-guard")


def test_the_configured_word_replaces_rerun_test():
    request = parse_request("/ci-budget-run x.py", 20, "/ci-budget-run")
    assert (request.name, request.command.specs) == ("/rerun-test", ["x.py"])
    assert parse_request("/rerun-test x.py", 20, "/ci-budget-run") is None


@pytest.mark.parametrize(
    "body",
    [
        "/tag-run-ci-label", "/tag-run-ci-label extra", "/tag-and-rerun-ci", "/rerun-failed-ci",
        "/rerun-group hicache", "/rerun-group@abcdef0 core", "please /rerun-test x.py", "", "hello",
    ],
)  # fmt: skip
def test_sglangs_other_commands_and_a_command_inside_a_line_are_no_command(body):
    assert parse_request(body, 20) is None


# --- what one label may start -----------------------------------------------------------------


def row(runner, i=0):
    return MatrixRow(name=f"s {i}", runner_config=runner, runs_on=[runner], suite="s",
                     partition=f"{i}/9")  # fmt: skip


def test_the_allowlist_defaults_to_the_configured_runner_configs_else_the_built_in_ones():
    assert allowed_runner_configs(Config()) == list(DEFAULT_RUNNER_CONFIGS)
    own = parse_config({"runner-configs": {"a100": {"runs-on": ["a100"]}}}, "t")
    assert allowed_runner_configs(own) == ["a100"]
    explicit = parse_config({"github": {"label-runner-configs": []}}, "t")
    assert allowed_runner_configs(explicit) == []


def test_rows_on_other_runner_configs_are_left_out_with_a_note():
    config = parse_config({"github": {"label-runner-configs": ["1-gpu-large"]}}, "t")
    rows = [row("1-gpu-large"), row("8-gpu-b200", 1), row("8-gpu-b200", 2), row("cpu", 3)]
    kept, notes, why = label_limits(rows, config)
    assert kept == rows[:1] and why is None
    assert notes == [
        "2 jobs on runner config '8-gpu-b200' not run: a label runs only the runner configs of "
        "the repository's CI (github.label-runner-configs)",
        "1 job on runner config 'cpu' not run: a label runs only the runner configs of the "
        "repository's CI (github.label-runner-configs)",
    ]


def test_the_job_cap_refuses_with_the_numbers_and_allows_exactly_the_cap():
    config = parse_config({"github": {"label-max-jobs": 3}}, "t")
    rows = [row("8-gpu-b200", i) for i in range(3)]
    assert label_limits(rows, config) == (rows, [], None)
    rows += [row("1-gpu-large", 3)]
    assert label_limits(rows, config) == (
        [], [], "4 jobs planned (3 on 8-gpu-b200, 1 on 1-gpu-large); a label starts at most 3 "
        "(github.label-max-jobs)",
    )  # fmt: skip
    assert Config().github.label_max_jobs == 100


def test_label_rows_plan_only_the_chosen_gating_labels_stages():
    config = parse_config({"github": {"gating-labels": {"run-b": ["base-b"], "all": []}}}, "t")
    regs = [reg(R + "a.py"), reg(R + "b.py", stage="base-c")]
    assert label_rows(regs, [], config) == ([], [], None)
    rows, notes, why = label_rows(regs, ["run-b"], config)
    assert [r.suite for r in rows] == ["base-b-test-1-gpu-large"] and notes == [] and why is None
    rows, _, _ = label_rows(regs, ["run-b", "all"], config)
    assert len(rows) == 2


def test_stages_merge_each_labels_patterns_and_an_empty_list_is_every_stage():
    gating = {"a": ["x", "y"], "b": ["y", "z"], "all": []}
    assert stages(["a", "b"], gating) == ["x", "y", "z"]
    assert stages(["a", "all"], gating) is None
    assert stages([], gating) == []


def test_permissions_default_to_none_in_facts():
    assert Facts().permissions is None and Facts().refused is None
    assert Permissions().grant("x") is None


# --- the comment flows in the core (test_plan's payloads and registry) -------------------------


def drive(body, facts=None, config=None, **changes):
    from ci_budget.trigger.decide import decide
    from tests.trigger.test_plan import REGS as PLAN_REGS
    from tests.trigger.test_plan import comment

    return decide("issue_comment", comment(body, **changes), facts or Facts(), PLAN_REGS,
                  config or Config())  # fmt: skip


def pull(**kw):
    from tests.trigger.test_plan import Pull

    return Pull(**kw)


def test_a_person_refused_before_on_the_pr_is_ignored_without_an_answer():
    plan = drive("/rerun-test test_a.py", Facts(refused={"codertocat"}))
    assert not plan.should_run and plan.reaction is None and plan.reply is None
    assert plan.reason == ("issue_comment: Codertocat was refused on #1 before (ci-budget's reply "
                           "there); `/rerun-test` ignored without another check")  # fmt: skip
    assert (plan.trigger, plan.pr_number, plan.comment_id) == ("rerun-test", 1, 492700400)
    # Someone else, or the same person once the look-up failed, is asked about as usual.
    assert drive("/rerun-test test_a.py", Facts(refused={"other"})).what == "permission"
    assert drive("/rerun-test test_a.py", Facts(refusals_error="HTTP 502")).what == "permission"


def test_without_the_look_up_a_refusal_is_replied_once_by_key():
    plan = drive("/rerun-test test_a.py", Facts(refusals_error="HTTP 502", permission="read"))
    assert plan.reply_once == "refused-codertocat" and "<!--" not in plan.reply
    plan = drive("/rerun-test test_a.py", Facts(refused=set(), permission="read"))
    assert plan.reply_once is None
    assert plan.reply.startswith("<!-- ci-budget:refused-codertocat -->\n@Codertocat ")


def test_a_command_problem_is_answered_after_authorisation():
    plan = drive("/rerun-test@xyz test_a.py", Facts(permission="write"))
    assert plan.reason == "`@xyz` is not a commit SHA (7 to 40 hex characters)"
    assert plan.reaction == "confused"
    refused = drive("/rerun-test@xyz test_a.py", Facts(permission="read", refused=set()))
    assert refused.reason.startswith("Codertocat has 'read'")


def _labeled_by(login, type_="User"):
    from tests.trigger.test_plan import labeled

    data = labeled()
    data["sender"].update(login=login, type=type_)
    return data


def test_a_label_from_a_bot_ci_budgets_own_identity_included_is_removed():
    from ci_budget.trigger.decide import decide
    from tests.trigger.test_plan import REGS as PLAN_REGS

    ours = parse_config({"github": {"comment-login": "github-actions[bot]"}}, "t")
    data = _labeled_by("github-actions[bot]", "Bot")
    plan = decide("pull_request_target", data, Facts(), PLAN_REGS, ours)
    assert plan.unlabel == ["run-ci"] and not plan.should_run
    plan = decide("pull_request_target", data, Facts(), PLAN_REGS, Config())
    assert plan.unlabel == ["run-ci"] and plan.trigger == "run-ci"
    assert plan.reason == ("pull_request labeled 'run-ci': refused: github-actions[bot] is a bot; "
                           "labels from bots never start runs")  # fmt: skip
    assert plan.notice == (
        "**ci-budget**: removed `run-ci`: github-actions\\[bot\\] is a bot; labels from bots never "
        "start runs. A gating label starts GPU runs only when applied by someone allowed to run them."
    )
    nobody = _labeled_by("")
    plan = decide("pull_request_target", nobody, Facts(), PLAN_REGS, Config())
    assert plan.unlabel == ["run-ci"] and "the event names no sender" in plan.reason
    del nobody["sender"]
    assert decide("pull_request_target", nobody, Facts(), PLAN_REGS, Config()).unlabel == ["run-ci"]


def test_only_the_labeled_action_checks_a_sender():
    from ci_budget.trigger.decide import decide
    from tests.trigger.test_plan import REGS as PLAN_REGS
    from tests.trigger.test_plan import labeled

    data = labeled(action="synchronize", labels=["run-ci"])
    data["sender"]["login"] = "someone-without-access"
    plan = decide("pull_request_target", data, Facts(), PLAN_REGS, Config())
    assert plan.should_run and plan.trigger == "pull-request"  # same-repository: pushes run
