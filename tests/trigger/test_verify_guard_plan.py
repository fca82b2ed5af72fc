"""`/verify-guard FILE REF…` goes through `/rerun-test`'s gate: permission, pinned commit,
registered file; its matrix row carries the fixes to revert."""

from __future__ import annotations

from ci_budget.trigger.rows import parse_guard_command
from tests.trigger.test_plan import HEAD, Pull, rerun

OLD = "fedcba9876543210fedcba9876543210fedcba98"


def test_a_writer_gets_a_run_on_the_files_runner_config_with_the_fixes_to_revert():
    plan, needs = rerun("/verify-guard test_a.py fixes/34184.patch 1a2b3c4d", "write")
    assert [n.what for n in needs] == ["refusals", "permission", "pull"]
    assert plan.should_run and plan.trigger == "verify-guard" and plan.head_sha == HEAD
    [row] = plan.matrix
    assert row.runner_config == "1-gpu-large" and row.specs == ["test/registered/a/test_a.py"]
    assert row.revert == ["fixes/34184.patch", "1a2b3c4d"] and row.name.startswith("verify-guard")
    assert plan.reply.startswith(
        "@Codertocat verifying `test_a.py` with `fixes/34184.patch`, `1a2b3c4d`"
    )
    assert f"at `{HEAD}`" in plan.reply and "1-gpu-large" in plan.reply
    assert plan.reaction == "eyes" and "/verify-guard by" in plan.reason


def test_without_write_access_nothing_runs_and_the_reply_names_the_command():
    plan, needs = rerun("/verify-guard test_a.py fixes/34184.patch", "read")
    assert [n.what for n in needs] == ["refusals", "permission"]  # the PR is never read
    assert not plan.should_run and plan.reaction == "confused"
    assert plan.reply.startswith(
        "<!-- ci-budget:refused-codertocat -->\n@Codertocat `/verify-guard` refused:"
    )


def test_bad_refs_and_a_class_spec_are_refused_each_with_why():
    plan, _ = rerun("/verify-guard test_a.py::TestA $(id) ../x.patch notes.txt abc")
    assert not plan.should_run
    lines = plan.reply.splitlines()[1:]
    assert "- `test_a.py::TestA`: name a whole file, not a class or test" in lines
    assert any(ln.startswith("- `$(id)`: contains the shell metacharacter") for ln in lines)
    assert any(ln.startswith("- `../x.patch`:") for ln in lines)
    assert any(ln.startswith("- `notes.txt`: not a commit") for ln in lines)
    assert any(ln.startswith("- `abc`: not a commit") for ln in lines)
    plan, _ = rerun("/verify-guard test_a.py")
    assert "give a file and at least one fix" in plan.reply


def test_at_sha_pins_that_commit_and_an_unproven_head_suggests_the_guard_form():
    plan, needs = rerun(f"/verify-guard@{OLD} test_a.py 1a2b3c4d", commits=[OLD, HEAD])
    assert plan.should_run and plan.head_sha == OLD and plan.matrix[0].revert == ["1a2b3c4d"]
    plan, _ = rerun("/verify-guard test_a.py 1a2b3c4d", pull=Pull(head_pushed_at=None))
    assert not plan.should_run
    assert f"`/verify-guard@{HEAD} test_a.py 1a2b3c4d`" in plan.reply
    plan, _ = rerun(f"/verify-guard@{OLD[:8]} test_a.py 1a2b3c4d", commits=[OLD, HEAD])
    assert (
        not plan.should_run and f"comment `/verify-guard@{HEAD} test_a.py 1a2b3c4d`" in plan.reply
    )


def test_parse_is_silent_on_other_comments():
    assert parse_guard_command("please /verify-guard test_a.py abc1234") is None
    assert parse_guard_command("/verify-guards x") is None
    assert parse_guard_command("/verify-guard@zz test_a.py abc1234").problems


def test_a_glob_is_never_a_guard_file():
    from ci_budget.trigger.rows import parse_guard_command

    sha = "a" * 40
    for file in ("test_*.py", "d/test_[ab].py", "test_?.py"):
        guard = parse_guard_command(f"/verify-guard {file} {sha}")
        assert guard.problems == [f"`{file}`: name one file, not a pattern"]
