"""`/rerun-test` spec rules pinned at their edges: both sides of every limit, each refusal
class on its own, and how people's spellings resolve to registered files."""

from __future__ import annotations

import pytest

from ci_budget.config import Config, parse_config
from ci_budget.models import Registration
from ci_budget.registry.specs import (
    COMMAND,
    MAX_LINE_CHARS,
    MAX_SPEC_CHARS,
    USAGE,
    Command,
    Resolved,
    check_spec,
    parse_command,
    resolve,
    show,
    split_spec,
)

R = "test/registered/"


def reg(file, runner="1-gpu-large", backend="cuda", **kw):
    return Registration(
        file=file,
        line=1,
        function=f"register_{backend}_ci",
        backend=backend,
        est_time=10,
        suite=kw.pop("suite", f"base-test-{runner}"),
        stage="base",
        runner_config=runner,
        **kw,
    )


def test_limits_and_command_are_the_documented_ones():
    assert (COMMAND, MAX_SPEC_CHARS, MAX_LINE_CHARS) == ("/rerun-test", 200, 2000)
    assert USAGE.startswith("/rerun-test") and "test/registered/dir/test_x.py" in USAGE


def test_spec_length_both_sides():
    assert check_spec("a" * 200) is None
    assert check_spec("a" * 201) == "201 characters; at most 200"
    assert check_spec("a" * 1000) == "1000 characters; at most 200"


def test_command_line_length_both_sides():
    ok = COMMAND + " " * (2000 - len(COMMAND) - 1) + "a"
    assert len(ok) == 2000
    assert parse_command(ok, 20).specs == ["a"] and parse_command(ok, 20).problems == []
    long = ok + "b"
    cmd = parse_command(long, 20)
    assert (cmd.specs, cmd.problems) == ([], ["the command line is 2001 characters; at most 2000"])
    padded = "  " + ok + " \t\r\nnext"  # surrounding blanks are not counted
    assert parse_command(padded, 20).problems == []


def test_spec_count_both_sides():
    three = COMMAND + " a b c"
    assert parse_command(three, 3).problems == []
    assert parse_command(three, 3).specs == ["a", "b", "c"]
    cmd = parse_command(three, 2)
    assert (cmd.specs, cmd.problems) == (["a", "b", "c"], ["3 specs given; at most 2"])
    assert parse_command(COMMAND + " a", 1).problems == []


@pytest.mark.parametrize("body", [COMMAND, COMMAND + " ", COMMAND + "\t", COMMAND + "\r\nx"])
def test_no_spec(body):
    cmd = parse_command(body, 20)
    assert (cmd.specs, cmd.problems) == ([], [f"no spec given; usage: {USAGE}"])


@pytest.mark.parametrize(
    "body, specs",
    [
        ("/rerun-test\ta.py", ["a.py"]),
        ("/rerun-test a.py\t \tb.py", ["a.py", "b.py"]),
        (" \t/rerun-test a.py \t", ["a.py"]),
        ("/rerun-test a.py\rb.py", ["a.py", "b.py"]),  # any whitespace, as sglang's split()
    ],
)
def test_command_separators(body, specs):
    assert parse_command(body, 20).specs == specs


@pytest.mark.parametrize("body", ["x", "rerun-test a", "/rerun", "/rerun-tes a"])
def test_not_the_command(body):
    assert parse_command(body, 20) is None


@pytest.mark.parametrize("word", ["/rerun-test-x", "/rerun-test,a", "/rerun-tests"])
def test_a_longer_word_is_refused_not_ignored(word):
    # sglang's handler runs `/rerun-tests a` as `/rerun-test a`; ci-budget says why it does not.
    cmd = parse_command(word + " a", 20)
    assert (cmd.specs, cmd.problems) == (
        [],
        [f"`{word}` is not a command; write `{COMMAND} SPEC...`"],
    )


def test_a_no_break_space_separates_like_a_space():
    assert parse_command("/rerun-test\u00a0a", 20).specs == ["a"]


@pytest.mark.parametrize(
    "spec, why",
    [
        ("a b", "contains whitespace or a non-printable character (' ')"),
        ("a\tb", "contains whitespace or a non-printable character (U+0009)"),
        ("a\x7fb", "contains whitespace or a non-printable character (U+007F)"),
        ("a\u200bb", "contains whitespace or a non-printable character (U+200B)"),
        ("é", "contains a non-ASCII character (U+00E9)"),
        ("\uff41", "contains a non-ASCII character (U+FF41)"),
        ("a*", "contains '*': name one file, not a pattern"),
        ("a]", "contains ']': name one file, not a pattern"),
        ("a~", "contains the shell metacharacter '~'"),
        ("a#b", "contains the shell metacharacter '#'"),
        ("a(b", "contains the shell metacharacter '('"),
        ("a)b", "contains the shell metacharacter ')'"),
        ("a}b", "contains the shell metacharacter '}'"),
        ("a,b", "contains ','; only letters, digits and _ . / : - are allowed"),
        ("a%b", "contains '%'; only letters, digits and _ . / : - are allowed"),
        ("a+b", "contains '+'; only letters, digits and _ . / : - are allowed"),
        ("-", "starts with '-' (that would read as an option)"),
    ],
)
def test_each_refusal_class(spec, why):
    assert check_spec(spec) == why


@pytest.mark.parametrize(
    "spec", ["a", "a-b", "A_z.0/9:x", "x" * 200, "test/registered/a/test_x.py::T::t", "a-"]
)
def test_allowed_characters(spec):
    assert check_spec(spec) is None
    assert check_spec(spec, glob=True) is None


@pytest.mark.parametrize("spec", ["test_*.py", "d/**/test_?.py", "test_[ab].py", "*"])
def test_globs_pass_only_where_allowed(spec):
    assert check_spec(spec, glob=True) is None
    assert check_spec(spec).endswith(": name one file, not a pattern")


@pytest.mark.parametrize(
    "spec, why",
    [
        ("test_*.py::T", "a glob cannot be combined with ::Class; drop the ::... to rerun whole files"),
        ("a.py::T::t[1]", "contains '[': [parameter] ids are not supported; name test classes or functions"),
        ("a.py::T*", "contains '*': [parameter] ids are not supported; name test classes or functions"),
        ("test_[!a].py", "contains the shell metacharacter '!'"),
        ("test_{a,b}.py", "contains the shell metacharacter '{'"),
    ],
)  # fmt: skip
def test_glob_refusals(spec, why):
    assert check_spec(spec, glob=True) == why


def test_first_problem_in_order_of_the_checks():
    # A space beats a non-ASCII letter, which beats a glob, which beats a shell character.
    assert "whitespace" in check_spec("é *;")
    assert "non-ASCII" in check_spec("*;é")
    assert "pattern" in check_spec(";*")
    assert "shell" in check_spec("=;")
    assert "201 characters" in check_spec(" " * 201)


@pytest.mark.parametrize(
    "spec, want",
    [
        ("a.py", ("a.py", [])),
        ("d/a.py::C", ("d/a.py", ["C"])),
        ("d/a.py::C::t", ("d/a.py", ["C", "t"])),
        ("d/a.py::C.t", ("d/a.py", ["C", "t"])),
        ("./a.py", ("a.py", [])),
        ("././a.py", ("a.py", [])),
        ("/repo/d/a.py", ("d/a.py", [])),
        ("/repo/./d/a.py::C", ("d/a.py", ["C"])),
    ],
)
def test_split_spec_shapes(spec, want):
    assert split_spec(spec, "/repo") == want
    assert split_spec(spec, "/repo/") == want


@pytest.mark.parametrize(
    "spec, root, why",
    [
        ("a.py::C::t.x", "/repo", "`t.x` is not a Python identifier"),
        ("a.py::A::b::c", "/repo", "too many parts; use path::Class or path::Class::test"),
        ("a.py::C.t.x", "/repo", "too many parts"),
        ("a.py::C::t::u", "/repo", "too many parts"),
        ("a.py:C", "/repo", "a single ':' in the path; use '::' before a class name"),
        ("a.py::C:t", "/repo", "`C:t` is not a Python identifier"),
        ("a.py::C::", "/repo", "`` is not a Python identifier"),
        ("/repo/a.py", None, "an absolute path outside the repository"),
        ("/repo/a.py", "", "an absolute path outside the repository"),
        ("/repox/a.py", "/repo", "an absolute path outside the repository"),
        ("/repo", "/repo", "an absolute path outside the repository"),
        ("d/../a.py", "/repo", "'..' is not allowed; name a file inside the test tree"),
        ("..", "/repo", "'..' is not allowed"),
        ("d/", "/repo", "not a normalised path (empty or '.' component)"),
        ("d/.", "/repo", "not a normalised path"),
        ("/repo/", "/repo", "not a normalised path"),
        (".", "/repo", "not a normalised path"),
    ],
)
def test_split_spec_refusals(spec, root, why):
    assert why in split_spec(spec, root)


REGS = [
    reg(R + "m/test_a.py"),
    reg(R + "m/test_multi.py", runner="2-gpu-large"),
    reg(R + "m/test_multi.py", runner="1-gpu-large", suite="other-1"),
    reg(R + "m/test_multi.py", runner="2-gpu-large", suite="other-2"),
    reg(R + "m/test_off.py", disabled="flaky"),
    reg(R + "m/test_off.py", backend="amd"),
    reg(R + "m/test_cpu.py", backend="cpu", runner="cpu"),
    reg("elsewhere/test_e.py"),
    *[reg(f"{R}d{i:02d}/test_many.py") for i in range(12)],
    reg(R + "x/test_amdonly.py", backend="amd"),
    reg(R + "y/test_amdonly.py", backend="amd"),
]


def test_file_on_several_runners_lists_each_once_in_registration_order():
    res = resolve(["m/test_multi.py"], REGS, Config())
    assert res.accepted == [
        Resolved(R + "m/test_multi.py", R + "m/test_multi.py", ("2-gpu-large", "1-gpu-large"))
    ]


def test_a_disabled_file_named_runs_with_a_note_from_the_configured_backend():
    res = resolve(["test_off.py"], REGS, Config())
    assert [r.file for r in res.accepted] == [R + "m/test_off.py"] and res.refused == []
    assert res.notes == [
        f"`{R}m/test_off.py` is disabled (flaky); it runs because it was asked for"
    ]
    amd = parse_config({"github": {"backends": ["amd"]}}, "t")
    res = resolve(["test_off.py"], REGS, amd)
    assert res.accepted[0].file == R + "m/test_off.py" and res.notes == []


def test_other_backends_are_named():
    res = resolve(["test_cpu.py"], REGS, Config())
    assert res.refused == [
        "`test_cpu.py`: registered for cpu, not for cuda (the backends this repository runs here)"
    ]
    both = parse_config({"github": {"backends": ["cuda", "cpu"]}}, "t")
    assert resolve(["test_cpu.py"], REGS, both).accepted[0].runner_configs == ("cpu",)


def test_many_matches_are_cut_at_ten():
    (why,) = resolve(["test_many.py"], REGS, Config()).refused
    listed = ", ".join(f"`{R}d{i:02d}/test_many.py`" for i in range(10))
    assert why == f"`test_many.py`: matches 12 registered files: {listed}, ...; give the path"
    regs = [r for r in REGS if "test_many" not in r.file or r.file < f"{R}d10"]
    (why,) = resolve(["test_many.py"], regs, Config()).refused
    assert why == f"`test_many.py`: matches 10 registered files: {listed}; give the path"


def test_bare_name_with_no_runnable_match_lists_them_all():
    (why,) = resolve(["test_amdonly.py"], REGS, Config()).refused
    assert why == (
        f"`test_amdonly.py`: matches 2 registered files: `{R}x/test_amdonly.py`, "
        f"`{R}y/test_amdonly.py`; give the path"
    )


def test_paths_outside_the_test_root_and_an_empty_test_root():
    assert resolve(["elsewhere/test_e.py"], REGS, Config()).accepted[0].file == (
        "elsewhere/test_e.py"
    )
    assert resolve(["test_e.py"], REGS, Config()).accepted[0].file == "elsewhere/test_e.py"
    assert resolve(["m/test_e.py"], REGS, Config()).refused == [
        "`m/test_e.py`: not a registered test file"
    ]
    for root in ("", "/"):
        config = parse_config({"test-root": root}, "t")
        assert resolve(["m/test_a.py"], REGS, config).refused == [
            "`m/test_a.py`: not a registered test file"
        ]
        assert resolve([R + "m/test_a.py"], REGS, config).accepted[0].file == R + "m/test_a.py"
    slashed = parse_config({"test-root": "/test/registered/"}, "t")
    assert resolve(["m/test_a.py"], REGS, slashed).accepted[0].file == R + "m/test_a.py"


def test_narrow_specs_survive_unless_the_whole_file_is_asked_for():
    res = resolve(["test_a.py::A", "test_multi.py::B::t", "test_multi.py"], REGS, Config())
    assert [r.spec for r in res.accepted] == [R + "m/test_a.py::A", R + "m/test_multi.py"]
    res = resolve(["test_a.py::A", "m/test_a.py::A"], REGS, Config())
    assert [r.spec for r in res.accepted] == [R + "m/test_a.py::A"]


def test_show_cuts_at_the_limit():
    assert show("a" * 60) == "`" + "a" * 60 + "`"
    assert show("a" * 61) == "`" + "a" * 60 + "...`"
    assert show("ab", limit=1) == "`a...`"
    assert show("é\x00") == "`\\xe9\\x00`"


@pytest.mark.parametrize(
    "body, specs",
    [
        ("/rerun-test a.py\u00a0", ["a.py"]),  # any whitespace ends a spec, as sglang's split()
        ("/rerun-test \x0ca.py", ["a.py"]),
        ("/rerun-test Xa.pyX", ["Xa.pyX"]),
        ("/rerun-test a.py\nb.py\nc.py", ["a.py"]),
        ("/rerun-test a\u200e.py\ufeff", ["a.py"]),  # format characters are dropped first
    ],
)
def test_whitespace_ends_a_spec(body, specs):
    assert parse_command(body, 20).specs == specs


@pytest.mark.parametrize("body", ["\x0c/rerun-test a", "\u00a0/rerun-test a", "\n \r\n/rerun-test a",
                                  "\u200b/rerun-test a"])  # fmt: skip
def test_leading_blanks_and_blank_lines_are_skipped(body):
    assert parse_command(body, 20).specs == ["a"]


@pytest.mark.parametrize("body", ["X/rerun-test a.py", "hi\n/rerun-test a.py"])
def test_the_command_word_starts_the_first_line_that_has_text(body):
    assert parse_command(body, 20) is None


def test_commands_by_value_keep_their_commit():
    bad = parse_command("/rerun-test@xyz1234 a.py", 20)
    assert (bad.specs, bad.sha, len(bad.problems)) == ([], None, 1)
    assert bad.problems[0] == "`@xyz1234` is not a commit SHA (7 to 40 hex characters)"
    assert parse_command("/rerun-test@ABCDEF0", 20) == Command(
        [], [f"no spec given; usage: {USAGE}"], "abcdef0"
    )
    assert parse_command("/rerun-test@abcdef0 a b", 1) == Command(
        ["a", "b"], ["2 specs given; at most 1"], "abcdef0"
    )


def test_ambiguous_matches_quote_paths_up_to_100_characters():
    long = R + "d" * (101 - len(R) - len("/test_l.py")) + "/test_l.py"
    assert len(long) == 101
    regs = [reg(long), reg(R + "e/test_l.py")]
    (why,) = resolve(["test_l.py"], regs, Config()).refused
    assert why == (
        f"`test_l.py`: matches 2 registered files: `{long[:100]}...`, `{R}e/test_l.py`; "
        "give the path"
    )
    eleven = [reg(f"{R}d{i:02d}/test_many.py") for i in range(11)]
    (why,) = resolve(["test_many.py"], eleven, Config()).refused
    assert why.endswith("`, ...; give the path") and why.count("`test/") == 10


def test_a_root_level_file_is_found_by_its_name():
    res = resolve(["test_top.py"], [reg("test_top.py")], Config())
    assert [r.file for r in res.accepted] == ["test_top.py"]


@pytest.mark.parametrize("root", ["/srv/repoX", "/srv/repoX/"])
def test_absolute_specs_against_roots_ending_in_odd_characters(root):
    assert split_spec("/srv/repoX/test/a.py", root) == ("test/a.py", [])
    assert split_spec("/srv/repo/test/a.py", root) == "an absolute path outside the repository"


def test_a_test_root_is_only_stripped_of_slashes():
    regs = [reg("suiteX/d/test_x.py")]
    config = parse_config({"test-root": "/suiteX/"}, "t")
    assert resolve(["d/test_x.py"], regs, config).accepted[0].file == "suiteX/d/test_x.py"
    empty = parse_config({"test-root": ""}, "t")
    assert resolve(["d/test_x.py"], [reg("/d/test_x.py")], empty).refused == [
        "`d/test_x.py`: not a registered test file"
    ]
