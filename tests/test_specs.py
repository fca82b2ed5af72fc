"""`/rerun-test` spec parsing, validation and resolution against registrations."""

from __future__ import annotations

import pytest

from ci_budget.config import Config, parse_config
from ci_budget.models import Registration
from ci_budget.registry.specs import check_spec, parse_command, resolve, show, split_spec

R = "test/registered/"


def reg(file, runner="1-gpu-large", stage="base-b", backend="cuda", **kw):
    suite = kw.pop("suite", None) or f"{stage}-test-{runner}"
    return Registration(
        file=R + file,
        line=3,
        function=f"register_{backend}_ci",
        backend=backend,
        est_time=kw.pop("est_time", 100.0),
        suite=suite,
        stage=None if kw.get("legacy") else stage,
        runner_config=None if kw.pop("legacy", False) else runner,
        **kw,
    )


REGS = [
    reg("models/test_a.py"),
    reg("models/test_b.py", runner="2-gpu-large"),
    reg("ops/test_dup.py"),
    reg("models/test_dup.py"),
    reg("ops/test_off.py", disabled="flaky on H100"),
    reg("ops/test_amd.py", backend="amd", runner="1-gpu-large"),
    reg("ops/test_legacy.py", suite="per-commit-1-gpu", legacy=True),
    reg("ops/test_odd.py", runner="9-gpu-x"),
    reg("ops/test_two.py"),
    reg("ops/test_two.py", stage="extra", runner="4-gpu-h100"),
    reg("only_amd/test_dup2.py", backend="amd"),
    reg("ops/test_dup2.py"),
]


def accepted(specs, regs=REGS, config=None, root=None):
    res = resolve(specs, regs, config or Config(), root)
    assert res.refused == []
    return [(r.spec, r.runner_configs) for r in res.accepted]


def refused(spec, regs=REGS, config=None, root=None):
    res = resolve([spec], regs, config or Config(), root)
    assert res.accepted == []
    assert len(res.refused) == 1
    assert res.refused[0].startswith(show(spec) + ": ")
    return res.refused[0]


def test_command_is_the_first_line_only():
    cmd = parse_command("/rerun-test a.py  b.py\t c.py\r\nsecond line /rerun-test x.py", 20)
    assert cmd.specs == ["a.py", "b.py", "c.py"]
    assert cmd.problems == []


@pytest.mark.parametrize(
    "body", ["rerun-test a.py", "/rerun a.py", "hi\n/rerun-test a.py", "", " \n "]
)
def test_other_comments_are_not_commands(body):
    assert parse_command(body, 20) is None


@pytest.mark.parametrize("body", ["/rerun-tests a.py", "/rerun-testa.py"])
def test_a_misspelt_command_is_refused_saying_why(body):
    (why,) = parse_command(body, 20).problems
    assert why.endswith("is not a command; write `/rerun-test SPEC...`")


def test_command_without_specs_gives_usage():
    cmd = parse_command("/rerun-test   \n", 20)
    assert cmd.specs == []
    assert "no spec given; usage: /rerun-test" in cmd.problems[0]


def test_too_many_specs_and_overlong_line_are_refused():
    cmd = parse_command("/rerun-test " + " ".join(f"t{i}.py" for i in range(4)), 3)
    assert cmd.problems == ["4 specs given; at most 3"]
    cmd = parse_command("/rerun-test " + "a" * 3000, 20)
    assert cmd.problems == ["the command line is 3012 characters; at most 2000"]


def test_repo_path_test_root_path_and_bare_name_resolve_to_the_same_file():
    want = [(R + "models/test_a.py", ("1-gpu-large",))]
    assert accepted([R + "models/test_a.py"]) == want
    assert accepted(["models/test_a.py"]) == want
    assert accepted(["test_a.py"]) == want
    assert accepted(["./models/test_a.py"]) == want


def test_class_and_test_narrowing_with_sglang_dot_form_normalised():
    assert accepted(
        ["test_a.py::TestA", "test_a.py::TestA.test_x", "test_a.py::TestB::test_y"]
    ) == [
        (R + "models/test_a.py::TestA", ("1-gpu-large",)),
        (R + "models/test_a.py::TestA::test_x", ("1-gpu-large",)),
        (R + "models/test_a.py::TestB::test_y", ("1-gpu-large",)),
    ]


def test_duplicates_collapse_and_whole_file_covers_narrower_specs():
    assert accepted(["test_a.py::TestA", "models/test_a.py", "test_a.py", "test_b.py"]) == [
        (R + "models/test_a.py", ("1-gpu-large",)),
        (R + "models/test_b.py", ("2-gpu-large",)),
    ]


def test_file_on_two_runner_configs_runs_on_both():
    assert accepted(["ops/test_two.py"]) == [(R + "ops/test_two.py", ("1-gpu-large", "4-gpu-h100"))]


def test_absolute_path_inside_the_repo_is_accepted_outside_refused():
    root = "/home/runner/work/repo/repo"
    assert accepted([f"{root}/{R}models/test_a.py"], root=root) == [
        (R + "models/test_a.py", ("1-gpu-large",))
    ]
    assert "absolute path outside the repository" in refused("/etc/passwd", root=root)
    assert "absolute path outside the repository" in refused(
        f"{root}x/{R}models/test_a.py", root=root
    )


def test_ambiguous_bare_name_lists_the_matches():
    why = refused("test_dup.py")
    assert f"matches 2 registered files: `{R}models/test_dup.py`, `{R}ops/test_dup.py`" in why
    assert why.endswith("; give the path")


def test_a_bare_name_is_ambiguous_even_when_only_one_file_runs_here():
    # As sglang's handler: every file of that name counts, whatever it registers.
    why = refused("test_dup2.py")
    assert f"matches 2 registered files: `{R}only_amd/test_dup2.py`, `{R}ops/test_dup2.py`" in why


def test_a_disabled_file_named_explicitly_runs():
    res = resolve(["ops/test_off.py"], REGS, Config())
    assert [(r.spec, r.runner_configs) for r in res.accepted] == [
        (R + "ops/test_off.py", ("1-gpu-large",))
    ]
    assert res.notes == [
        f"`{R}ops/test_off.py` is disabled (flaky on H100); it runs because it was asked for"
    ]


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("models/test_zzz.py", "not a registered test file"),
        ("test/registered/models", "not a registered test file"),
        ("ops/test_amd.py", "registered for amd, not for cuda"),
        ("ops/test_legacy.py", "suite 'per-commit-1-gpu' without a runner_config"),
        ("ops/test_odd.py", "runner config '9-gpu-x' is not configured"),
    ],
)
def test_files_that_cannot_run_here_are_refused_with_the_reason(spec, reason):
    assert reason in refused(spec)


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("../../etc/passwd", "'..' is not allowed"),
        ("models/../models/test_a.py", "'..' is not allowed"),
        ("models//test_a.py", "not a normalised path"),
        ("models/./test_a.py", "not a normalised path"),
        ("models/*.py::TestA", "a glob cannot be combined with ::Class"),
        ("test_a.py::TestA::test_x[1-2]", "contains '[': [parameter] ids are not supported"),
        ("test_a.py;rm", "shell metacharacter ';'"),
        ("test_a.py|cat", "shell metacharacter '|'"),
        ("test_a.py&&id", "shell metacharacter '&'"),
        ("$(id)", "shell metacharacter '$'"),
        ("a`id`", "shell metacharacter U+0060"),
        ("a>b", "shell metacharacter '>'"),
        ("a<b", "shell metacharacter '<'"),
        ("{a,b}", "shell metacharacter '{'"),
        ("!1", "shell metacharacter '!'"),
        ("a'b'", "shell metacharacter '''"),
        ('a"b"', "shell metacharacter '\"'"),
        ("a\\b", "shell metacharacter '\\'"),
        ("a\nb", "whitespace or a non-printable character (U+000A)"),
        ("a\rb", "whitespace or a non-printable character (U+000D)"),
        ("a\x00b", "non-printable character (U+0000)"),
        ("a\x1b[31m", "non-printable character (U+001B)"),
        ("a\u00a0b", "whitespace or a non-printable character (U+00A0)"),
        ("a\u2028b", "(U+2028)"),
        ("tést_a.py", "non-ASCII character (U+00E9)"),
        ("a=b", "contains '='; only letters, digits"),
        ("@user", "contains '@'; only letters"),
        ("-p", "starts with '-'"),
        ("--co", "starts with '-'"),
        ("x" * 201, "201 characters; at most 200"),
        ("test_a.py:TestA", "a single ':'"),
        ("test_a.py::", "is not a Python identifier"),
        ("test_a.py::1Test", "`1Test` is not a Python identifier"),
        ("test_a.py::A::b::c", "too many parts"),
        ("test_a.py::A.b.c", "too many parts"),
    ],
)
def test_malicious_or_malformed_specs_are_refused_saying_why(spec, reason):
    assert check_spec(spec) is not None or isinstance(split_spec(spec), str)
    assert reason in refused(spec)


def test_every_refusal_is_listed_and_good_specs_still_resolve():
    res = resolve(["test_a.py", "nope.py", "a;b"], REGS, Config())
    assert [r.spec for r in res.accepted] == [R + "models/test_a.py"]
    assert res.refused == [
        "`nope.py`: not a registered test file",
        "`a;b`: contains the shell metacharacter ';'",
    ]


def test_quoted_specs_cannot_break_out_of_a_code_span():
    assert show("a`b\n" + "x" * 100) == "`a'b\\n" + "x" * 56 + "...`"


def test_configured_backends_and_test_root_are_honoured():
    config = parse_config(
        {"github": {"backends": ["amd"]}, "test-root": "test/registered/ops"}, "t"
    )
    assert accepted(["test_amd.py"], config=config) == [(R + "ops/test_amd.py", ("1-gpu-large",))]
    assert "not for amd" in refused(R + "models/test_a.py", config=config)
