"""The pure authorisation and command rules, pinned by value: CI_PERMISSIONS.json entries of
every shape, each grant for each kind of request, the order of the checks, the commands'
parsing, group expansion and what one label may start."""

from __future__ import annotations

import math

import pytest
from helpers.registry import reg

from ci_budget.config import DEFAULT_RUNNER_CONFIGS, Config, parse_config
from ci_budget.models import MatrixRow
from ci_budget.registry.specs import Command
from ci_budget.trigger.authz import (
    LABEL,
    RERUN_FAILED,
    RUN,
    Grant,
    Permissions,
    PermissionsError,
    access,
    definitive,
    granted,
    parse_permissions,
)
from ci_budget.trigger.commands import (
    GROUP_USAGE,
    RERUN_FAILED_CI,
    RERUN_GROUP,
    TAG,
    TAG_AND_RERUN,
    first_line,
    group_specs,
    parse_request,
)
from ci_budget.trigger.facts import Facts
from ci_budget.trigger.limits import (
    allowed_runner_configs,
    label_limits,
    label_rows,
    stages,
    tag_labels,
)

SOURCE = ".github/CI_PERMISSIONS.json"


def entry(tag=True, rerun=True, cooldown=0, **extra):
    return {"can_tag_run_ci_label": tag, "can_rerun_failed_ci": rerun,
            "cooldown_interval_minutes": cooldown, "reason": "custom override", **extra}  # fmt: skip


# --- CI_PERMISSIONS.json ----------------------------------------------------------------------


def test_entries_are_read_by_case_folded_login():
    perms = parse_permissions({"BBuf": entry(cooldown=60), "x": entry(False, False, 30)})
    assert perms.source == SOURCE and perms.problems == ()
    assert perms.grant("bbuf") == Grant(True, True, 60.0)
    assert perms.grant("BBUF") == perms.grant("BBuf")
    assert perms.grant("x") == Grant(False, False, 30.0)
    assert perms.grant("nobody") is None


def test_missing_keys_grant_nothing_and_a_missing_cooldown_is_none():
    assert parse_permissions({"a": {}}).grant("a") == Grant(False, False, None)
    assert parse_permissions({"a": {"cooldown_interval_minutes": 0.0}}).grant("a") == Grant(
        False, False, 0.0
    )


@pytest.mark.parametrize(
    "value, why",
    [
        ("yes", "'a': expected an object, not str"),
        (None, "'a': expected an object, not null"),
        ({"can_tag_run_ci_label": "true"}, "'a': can_tag_run_ci_label is str, not true or false"),
        ({"can_rerun_failed_ci": 1}, "'a': can_rerun_failed_ci is int, not true or false"),
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
    assert perms.grant("a") is None and perms.grant("b") == Grant(True, True, 0.0)


@pytest.mark.parametrize("data, kind", [([], "list"), (None, "null"), ("x", "str")])
def test_a_file_that_is_not_an_object_is_refused_whole(data, kind):
    with pytest.raises(PermissionsError) as err:
        parse_permissions(data)
    assert str(err.value) == f"{SOURCE}: expected a JSON object of logins, not {kind}"


def test_the_real_file_shapes_from_sglang_main():
    # Three shapes, as in sglang's file at 3c69a4c (155 x cooldown 0, 88 x 60, 2 x 30).
    perms = parse_permissions({"1pikachu": entry(), "842974287": entry(cooldown=60)})
    assert granted(RUN, perms.grant("1pikachu"), "1pikachu")
    assert not granted(RUN, perms.grant("842974287"), "842974287")
    assert granted(LABEL, perms.grant("842974287"), "842974287")


# --- the grants -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "what, grant, expect",
    [
        (RUN, Grant(True, True, 0.0), True),
        (RUN, Grant(True, True, 60.0), False),
        (RUN, Grant(True, True, None), False),
        (RUN, Grant(False, False, 0.0), True),  # cooldown 0 is the /rerun-test grant
        (LABEL, Grant(True, False, 60.0), True),
        (LABEL, Grant(False, True, 0.0), False),
        (RERUN_FAILED, Grant(False, True, 60.0), True),
        (RERUN_FAILED, Grant(True, False, 0.0), False),
        ("unknown", Grant(True, True, 0.0), False),
        (RUN, None, False),
        (LABEL, None, False),
        (RERUN_FAILED, None, False),
    ],
)
def test_each_kind_of_request_has_its_own_grant(what, grant, expect):
    assert granted(what, grant, "someone") is expect


def test_the_prs_author_may_rerun_failed_ci_and_nothing_else():
    assert granted(RERUN_FAILED, None, "Alice", author="alice")
    assert not granted(RERUN_FAILED, None, "alice", author="bob")
    assert not granted(RERUN_FAILED, None, "alice", author=None)
    assert not granted(LABEL, None, "alice", author="alice")
    assert not granted(RUN, None, "alice", author="alice")


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
        (RERUN_FAILED, "/rerun-failed-ci needs the PR's author, admin or write, or "
         "can_rerun_failed_ci in " + SOURCE),
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


def test_first_line_drops_format_characters_and_leading_blank_lines():
    assert first_line("\n\n  /rerun-failed-ci\u200e  \nmore") == "/rerun-failed-ci"
    assert first_line("\ufeff/tag-run-ci-label\r\nx") == "/tag-run-ci-label"
    assert first_line("") == ""


@pytest.mark.parametrize(
    "body, name, extra, problems",
    [
        ("/tag-run-ci-label", TAG, False, []),
        ("/tag-run-ci-label extra", TAG, True, []),
        ("/tag-run-ci-label please extra", TAG, True, []),
        ("\n/tag-and-rerun-ci extra", TAG_AND_RERUN, True, []),
        ("/tag-and-rerun-ci", TAG_AND_RERUN, False, []),
        ("/rerun-failed-ci extra", RERUN_FAILED_CI, False, []),
        ("/rerun-failed-ci@abc", RERUN_FAILED_CI, False, ["`/rerun-failed-ci` takes no @SHA: it acts on the head"]),
    ],
)  # fmt: skip
def test_sglangs_commands_parse_as_its_handler_reads_them(body, name, extra, problems):
    request = parse_request(body, 20)
    assert (request.name, request.extra, request.command.problems) == (name, extra, problems)
    assert request.command.specs == []


def test_each_command_needs_its_kind_and_names_its_trigger():
    needs = {b: parse_request(b, 20) for b in
             ("/rerun-test x.py", "/verify-guard x.py abcdef0", "/rerun-group g",
              "/tag-run-ci-label", "/tag-and-rerun-ci", "/rerun-failed-ci")}  # fmt: skip
    assert {b: r.needs for b, r in needs.items()} == {
        "/rerun-test x.py": (RUN,),
        "/verify-guard x.py abcdef0": (RUN,),
        "/rerun-group g": (RUN,),
        "/tag-run-ci-label": (LABEL,),
        "/tag-and-rerun-ci": (LABEL, RERUN_FAILED),
        "/rerun-failed-ci": (RERUN_FAILED,),
    }
    assert [r.trigger for r in needs.values()] == [
        "rerun-test", "verify-guard", "rerun-group", "run-ci", "run-ci", "rerun-failed-ci",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "body", ["/tag-run-ci-labels", "please /rerun-failed-ci", "/rerun-groups x", "", "hello"]
)
def test_a_prefix_or_a_command_inside_a_line_is_no_command(body):
    assert parse_request(body, 20) is None


def test_rerun_group_takes_groups_and_a_full_sha():
    request = parse_request("/rerun-group hicache/ core", 20)
    assert (request.name, request.groups, request.command) == (
        RERUN_GROUP, ["hicache", "core"], Command([], [], None),
    )  # fmt: skip
    request = parse_request("/rerun-group@ABCDEF0 hicache", 20)
    assert request.command.sha == "abcdef0" and request.command.problems == []


@pytest.mark.parametrize(
    "body, problem",
    [
        ("/rerun-group", f"no test group given; usage: {GROUP_USAGE}"),
        ("/rerun-group ../etc", "`../etc`: not a test group (a directory under the test root)"),
        ("/rerun-group a/../b", "`a/../b`: not a test group (a directory under the test root)"),
        ("/rerun-group .hidden", "`.hidden`: not a test group (a directory under the test root)"),
        ("/rerun-group $(id)", "`$(id)`: not a test group (a directory under the test root)"),
        ("/rerun-group@xyz g", "`@xyz` is not a commit SHA (40 hex characters)"),
        ("/rerun-group a b c d", "4 groups given; at most 3"),
    ],
)
def test_rerun_group_refuses_what_is_not_a_group(body, problem):
    assert parse_request(body, 3).command.problems == [problem]


R = "test/registered/"
REGS = [reg(R + "hicache/test_a.py"), reg(R + "hicache/deep/test_b.py"), reg(R + "core/test_c.py"),
        reg(R + "hicache/test_a.py", runner="2-gpu-large"), reg(R + "test_top.py")]  # fmt: skip


def test_a_group_is_every_registered_file_under_its_directory_once_in_order():
    found, refused = group_specs(["hicache", "core", "hicache"], REGS, "test/registered")
    assert found == [R + "hicache/deep/test_b.py", R + "hicache/test_a.py", R + "core/test_c.py"]
    assert refused == []
    found, refused = group_specs(["nope", "hi"], REGS, "test/registered/")
    assert found == []
    assert refused == [
        "`nope`: no registered test file under `test/registered/nope`; groups: `core`, `hicache`",
        "`hi`: no registered test file under `test/registered/hi`; groups: `core`, `hicache`",
    ]
    assert group_specs(["x"], [], "t")[1] == [
        "`x`: no registered test file under `t/x`; groups: none"
    ]


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


def test_the_tag_command_applies_run_ci_or_the_first_gating_label():
    assert tag_labels(Config(), False) == ["run-ci"]
    assert tag_labels(Config(), True) == ["run-ci", "run-ci-extra"]
    other = parse_config({"github": {"gating-labels": {"gpu": [], "run-ci": []}}}, "t")
    assert tag_labels(other, False) == ["run-ci"]
    mine = parse_config({"github": {"gating-labels": {"gpu": [], "big": []}}}, "t")
    assert tag_labels(mine, True) == ["gpu", "run-ci-extra"]
    none = parse_config({"github": {"gating-labels": {}}}, "t")
    assert tag_labels(none, False) == ["run-ci"]


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


def test_tag_run_ci_label_plans_the_label_run_and_says_so():
    from tests.trigger.test_plan import HEAD

    plan = drive("/tag-run-ci-label extra", Facts(permission="write", pull=pull()))
    assert plan.should_run and plan.trigger == "run-ci" and plan.head_sha == HEAD
    assert plan.add_labels == ["run-ci", "run-ci-extra"] and plan.reaction == "+1"
    assert plan.rerun_failed is None and plan.rerun_skip_own
    assert (
        plan.reason
        == f"/tag-run-ci-label by Codertocat: 5 jobs: 3 suites (base-b-test-1-gpu-large, base-b-test-2-gpu-large, stage-c-test-4-gpu-h100) at {HEAD[:10]}"
    )  # noqa: E501
    assert (
        plan.reply.startswith(
            f"@Codertocat labelled `run-ci`, `run-ci-extra` at `{HEAD}` (#&#8203;1): "
        )
        is False
    )  # noqa: E501
    assert plan.reply.startswith(
        f"@Codertocat labelled `run-ci`, `run-ci-extra` at `{HEAD}` (#1): 5 jobs"
    )  # noqa: E501
    assert plan.reply.count("\n- `") == 5


def test_tag_run_ci_label_on_a_draft_labels_without_a_run():
    plan = drive("/tag-run-ci-label", Facts(permission="write", pull=pull(draft=True)))
    assert not plan.should_run and plan.add_labels == ["run-ci"] and plan.reaction == "+1"
    assert plan.reason == "/tag-run-ci-label: #1 is a draft; labelled `run-ci`"
    drafts = parse_config({"github": {"run-drafts": True}}, "t")
    assert drive(
        "/tag-run-ci-label", Facts(permission="write", pull=pull(draft=True)), drafts
    ).should_run


def test_tag_run_ci_label_on_an_unproven_head_suggests_the_label_by_hand():
    late = pull(head_pushed_at="2019-05-15T15:20:40Z")
    plan = drive("/tag-run-ci-label", Facts(permission="write", pull=late))
    assert not plan.should_run and plan.add_labels == [] and plan.reaction == "confused"
    assert plan.reason.endswith(
        "to run it, comment `/tag-run-ci-label` again, or apply `run-ci` by hand"
    )


def test_tag_run_ci_label_beyond_the_job_cap_is_refused_without_labelling():
    config = parse_config({"github": {"label-max-jobs": 2}}, "t")
    plan = drive("/tag-run-ci-label", Facts(permission="write", pull=pull()), config)
    assert not plan.should_run and plan.add_labels == [] and plan.matrix == []
    assert "5 jobs planned (3 on 4-gpu-h100, 1 on 1-gpu-large, 1 on 2-gpu-large)" in plan.reason


def test_tag_run_ci_label_with_no_gating_label_configured_labels_only():
    none = parse_config({"github": {"gating-labels": {}}}, "t")
    plan = drive("/tag-run-ci-label", Facts(permission="write", pull=pull()), none)
    assert not plan.should_run and plan.add_labels == ["run-ci"]
    assert "no runnable suite" in plan.reason


def test_rerun_failed_ci_reads_only_the_head_and_plans_no_job():
    from tests.trigger.test_plan import HEAD

    needs = drive("/rerun-failed-ci", Facts(permission="write"))
    assert needs.what == "pull" and needs.number == 1
    plan = drive("/rerun-failed-ci", Facts(permission="write", pull=pull()))
    assert (plan.should_run, plan.matrix, plan.rerun_failed, plan.rerun_skip_own) == (
        False, [], HEAD, False,
    )  # fmt: skip
    assert plan.trigger == "rerun-failed-ci" and plan.reaction is None and plan.reply is None
    assert (
        plan.reason
        == f"/rerun-failed-ci by Codertocat: rerunning the failed and skipped workflow runs at {HEAD[:10]}"
    )  # noqa: E501
    closed = drive("/rerun-failed-ci", Facts(permission="write", pull=pull(state="closed")))
    assert closed.rerun_failed is None and closed.reason == "pull request #1 is closed"


def test_the_prs_author_is_read_from_the_payload_without_an_api_call():
    plan = drive("/rerun-failed-ci", Facts(pull=pull()), issue__user__login="Codertocat")
    assert plan.rerun_failed is not None
    assert drive("/rerun-failed-ci", Facts(), issue__user__login="someone").what == "refusals"
    assert drive("/rerun-failed-ci", Facts(), issue__user=None).what == "refusals"


def test_tag_and_rerun_ci_does_each_part_it_may():
    grants = parse_permissions({"codertocat": entry(tag=False, rerun=True, cooldown=60)})
    plan = drive("/tag-and-rerun-ci", Facts(permissions=grants, pull=pull()))
    assert plan.add_labels == [] and plan.rerun_failed and not plan.should_run
    assert plan.trigger == "rerun-failed-ci"
    grants = parse_permissions({"codertocat": entry(tag=True, rerun=False, cooldown=0)})
    plan = drive("/tag-and-rerun-ci", Facts(permissions=grants, pull=pull()),
                 issue__user__login="someone")  # not the PR's author  # fmt: skip
    assert plan.add_labels == ["run-ci"] and plan.rerun_failed is None and plan.should_run
    plan = drive("/tag-and-rerun-ci", Facts(permissions=grants, pull=pull()))  # the author
    assert plan.add_labels == ["run-ci"] and plan.rerun_failed is not None
    plan = drive("/tag-and-rerun-ci", Facts(permission="write", pull=pull()))
    assert plan.add_labels == ["run-ci"] and plan.rerun_failed and plan.rerun_skip_own


def test_a_command_problem_is_answered_after_authorisation():
    plan = drive("/rerun-failed-ci@abc", Facts(permission="write"))
    assert plan.reason == "`/rerun-failed-ci` takes no @SHA: it acts on the head"
    refused = drive("/rerun-failed-ci@abc", Facts(permission="read", refused=set()),
                    issue__user__login="someone")  # fmt: skip
    assert refused.reason.startswith("Codertocat has 'read'")


def test_rerun_group_in_the_core_names_its_groups():
    from tests.trigger.test_plan import R

    plan = drive("/rerun-group a", Facts(permission="write", pull=pull()))
    assert plan.should_run and plan.trigger == "rerun-group"
    assert plan.reason.startswith(
        "/rerun-group by Codertocat: 2 specs on "
    ) and plan.reason.endswith(" (a)")
    assert sorted(s for r in plan.matrix for s in r.specs) == [R + "a/test_a.py", R + "a/test_b.py"]
    plan = drive("/rerun-group zzz", Facts(permission="write", pull=pull()))
    assert not plan.should_run and plan.reason.startswith("`zzz`: no registered test file under")
    facts = Facts(permission="write", pull=pull(), read_commits=True)
    assert drive("/rerun-group a", facts).what == "registry"


# --- cooldowns: sglang's pr-gate rations labels from people without write access -------------


def test_the_cooldown_is_the_smaller_of_the_default_and_the_files_and_writers_have_none():
    from ci_budget.trigger.authz import cooldown_minutes

    grants = {"a": entry(cooldown=60), "b": entry(cooldown=0), "c": {"can_tag_run_ci_label": True},
              "d": entry(cooldown=500)}  # fmt: skip
    config = parse_config({"github": {"allow-users": ["e"]}}, "t")
    assert cooldown_minutes("a", facts("read", grants=grants), config) == 60
    assert cooldown_minutes("a", facts(grants=grants), config) == "ask"
    assert cooldown_minutes("a", facts("write", grants=grants), config) == 0
    assert cooldown_minutes("a", facts("maintain", grants=grants), config) == 0
    assert cooldown_minutes("a", facts(error="HTTP 502", grants=grants), config) == 0
    assert cooldown_minutes("b", facts(grants=grants), config) == 0
    assert cooldown_minutes("c", facts("triage", grants=grants), config) == 120  # the default
    assert cooldown_minutes("d", facts("read", grants=grants), config) == 120  # the smaller
    assert cooldown_minutes("e", facts(grants=grants), config) == 0  # allow-users
    assert cooldown_minutes("x", facts(grants=grants), config) == 0  # allowed by permission
    off = parse_config({"github": {"label-cooldown-minutes": 0}}, "t")
    assert cooldown_minutes("a", facts("read", grants=grants), off) == 0


def test_cooling_asks_for_the_last_labelled_run_and_refuses_inside_the_window():
    from ci_budget.trigger.authz import cooling
    from ci_budget.trigger.facts import Need

    grants = parse_permissions({"a": entry(cooldown=60)})
    base = dict(permission="read", permissions=grants)
    assert cooling("a", Facts(**base), Config()) == Need("recent", login="a", minutes=60.0)
    assert cooling("a", Facts(**base, recent=""), Config()) is None
    assert cooling("a", Facts(**base, recent_error="HTTP 502"), Config()) is None
    assert cooling("a", Facts(**base, recent="2026-08-01T10:00:00Z"), Config()) == (
        "a's last labelled run started at 2026-08-01T10:00:00Z; without write access a label "
        "starts at most one run per 60 minutes (cooldown_interval_minutes, or "
        "github.label-cooldown-minutes)"
    )
    assert cooling("a", Facts(permissions=grants), Config()) == Need("permission", login="a")


def test_a_group_runs_what_can_run_and_lists_the_rest():
    from ci_budget.trigger.decide import decide
    from tests.trigger.test_plan import REGS as PLAN_REGS
    from tests.trigger.test_plan import comment

    regs = [*PLAN_REGS, reg(R + "a/test_amd.py").model_copy(update={"backend": "amd"})]
    facts = Facts(permission="write", pull=pull())
    plan = decide("issue_comment", comment("/rerun-group a"), facts, regs, Config())
    assert plan.should_run and plan.reason.endswith(" (a); 1 not run")
    assert (
        "- not run: `a/test_amd.py`" in plan.reply
        or "- not run: `test/registered/a/test_amd.py`" in plan.reply
    )
    only = [reg(R + "b/test_amd.py").model_copy(update={"backend": "amd"})]
    plan = decide("issue_comment", comment("/rerun-group b"), facts, only, Config())
    assert not plan.should_run and "registered for amd" in plan.reason


def _labeled_by(login, type_="User"):
    from tests.trigger.test_plan import labeled

    data = labeled()
    data["sender"].update(login=login, type=type_)
    return data


def test_a_label_from_ci_budget_itself_is_silent_and_other_bots_are_removed():
    from ci_budget.trigger.decide import decide
    from tests.trigger.test_plan import REGS as PLAN_REGS

    ours = parse_config({"github": {"comment-login": "github-actions[bot]"}}, "t")
    data = _labeled_by("github-actions[bot]", "Bot")
    plan = decide("pull_request_target", data, Facts(), PLAN_REGS, ours)
    assert not plan.should_run and plan.unlabel == [] and plan.notice is None
    assert "applied by ci-budget itself" in plan.reason
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
