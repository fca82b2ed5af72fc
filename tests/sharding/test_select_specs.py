"""What `ci-budget run` runs for specs and suites, by value: spec shapes, files registered in
several suites, narrowed specs, disabled files, ordering and shards, and each usage error."""

from __future__ import annotations

import pytest
from helpers.registry import reg

from ci_budget.sharding.select import (
    Job,
    SelectionError,
    Skipped,
    _nothing,
    parse_spec,
    select_jobs,
    suite_pool,
)

S, T = "base-b-test-1-gpu-large", "stage-c-test-1-gpu-large"


@pytest.mark.parametrize(
    "spec, want",
    [
        ("a.py", ("a.py", None)),
        ("d/a.py::TestA", ("d/a.py", "::TestA")),
        ("d/a.py::TestA::test_x", ("d/a.py", "::TestA::test_x")),
        ("d/a.py::TestA.test_x", ("d/a.py", "::TestA::test_x")),  # sglang's form
    ],
)
def test_spec_shapes(spec, want):
    assert parse_spec(spec) == want


@pytest.mark.parametrize(
    "spec, why",
    [
        ("", "spec '': expected path[::Class[::test]]"),
        ("::A", "spec '::A': expected path[::Class[::test]]"),
        ("a.py::", "spec 'a.py::': expected path[::Class[::test]]"),
        (
            "a.py::A::b::c",
            "spec 'a.py::A::b::c': too many parts; use path::Class or path::Class::test",
        ),
        ("a.py::1A", "spec 'a.py::1A': `1A` is not a Python identifier"),
    ],
)
def test_spec_shapes_refused(spec, why):
    with pytest.raises(SelectionError) as err:
        parse_spec(spec)
    assert str(err.value) == why


REGS = [
    reg("a.py", 300),
    reg("b.py", 100),
    reg("b.py", 500, suite=T),  # b.py is budgeted most in T
    reg("c.py", 200, suite=T),
    reg("off.py", 50, disabled="broken"),
    reg("off.py", 60, suite=T, disabled="flaky"),
]


def jobs(sel):
    return [(j.path, j.est_time, j.suite, j.backend, j.selection) for j in sel.jobs]


def test_specs_run_each_file_once_longest_first_with_their_selectors():
    sel = select_jobs(REGS, specs=["b.py::B", "a.py", "b.py::C.t", "b.py::B"])
    assert jobs(sel) == [
        ("b.py", 500, T, "cuda", ["::B", "::C::t"]),
        ("a.py", 300, S, "cuda", []),
    ]
    assert sel.skipped == []
    sel = select_jobs(REGS, specs=["b.py::B", "b.py", "b.py::C"])
    assert jobs(sel) == [("b.py", 500, T, "cuda", [])]  # the whole file covers the rest
    sel = select_jobs(REGS, specs=["b.py", "b.py::C"])
    assert jobs(sel) == [("b.py", 500, T, "cuda", [])]


def test_specs_within_a_suite_and_resolved_paths():
    sel = select_jobs(REGS, [S], ["./b.py"], resolve=lambda p: p.removeprefix("./"))
    assert jobs(sel) == [("b.py", 100, S, "cuda", [])]
    with pytest.raises(SelectionError) as err:
        select_jobs(REGS, [S], ["c.py"])
    assert str(err.value) == f"spec 'c.py': c.py is not a registered test file in suite(s) {S}"
    with pytest.raises(SelectionError) as err:
        select_jobs(REGS, specs=["z.py"])
    assert str(err.value) == "spec 'z.py': z.py is not a registered test file"


def test_a_disabled_file_named_by_a_spec_runs_as_sglangs_rerun_runs_it():
    sel = select_jobs(REGS, specs=["off.py", "a.py"])  # specs run in the order given
    assert jobs(sel) == [("off.py", 60, T, "cuda", []), ("a.py", 300, S, "cuda", [])]
    assert sel.skipped == []
    sel = select_jobs([reg("off.py", 5, disabled=""), reg("off.py", 1, suite=T)], specs=["off.py"])
    assert jobs(sel) == [("off.py", 1, T, "cuda", [])]  # an enabled registration first


def test_an_unregistered_file_runs_only_where_named_as_extra():
    extra = ["mm/test_x.py"]
    sel = select_jobs(REGS, specs=["mm/test_x.py::T::t", "a.py"], extra=extra)
    assert jobs(sel) == [("mm/test_x.py", 0, None, None, ["::T::t"]), ("a.py", 300, S, "cuda", [])]
    with pytest.raises(SelectionError, match="mm/test_x.py is not a registered test file in"):
        select_jobs(REGS, [S], specs=["mm/test_x.py"], extra=extra)
    with pytest.raises(SelectionError, match="mm/test_y.py is not a registered test file"):
        select_jobs(REGS, specs=["mm/test_y.py"], extra=extra)


def test_suites_keep_a_file_under_the_suite_that_budgets_it_most():
    sel = select_jobs(REGS, [S, T])
    assert jobs(sel) == [
        ("b.py", 500, T, "cuda", []),
        ("a.py", 300, S, "cuda", []),
        ("c.py", 200, T, "cuda", []),
    ]
    assert sel.skipped == [Skipped("off.py", S, "cuda", 50, "broken"),
                           Skipped("off.py", T, "cuda", 60, "flaky")]  # fmt: skip
    tie = [reg("x.py", 100), reg("x.py", 100, suite=T)]
    assert [j.suite for j in select_jobs(tie, [S, T]).jobs] == [S]  # the first on a tie
    assert [j.suite for j in select_jobs(tie, [T, S]).jobs] == [S]


def test_a_disabled_registration_does_not_hide_an_enabled_one():
    regs = [reg("x.py", 100, disabled="old"), reg("x.py", 50, suite=T)]
    sel = select_jobs(regs, [S, T])
    assert jobs(sel) == [("x.py", 50, T, "cuda", [])] and sel.skipped == []


def test_backend_filters_spec_selection():
    regs = [reg("a.py", 10), reg("a.py", 99, suite=T, backend="amd")]
    assert jobs(select_jobs(regs, specs=["a.py"], backend="cuda")) == [("a.py", 10, S, "cuda", [])]
    assert jobs(select_jobs(regs, specs=["a.py"])) == [("a.py", 99, T, "amd", [])]
    with pytest.raises(SelectionError, match="a.py is not a registered test file"):
        select_jobs(regs, specs=["a.py"], backend="npu")


def test_order_ties_and_shards():
    # Longest first, ties by path; LPT: c -> 0, d -> 1, a -> 1 (20 < 30), b -> 0 (a tie: the
    # lower shard). The disabled file is reported by the first shard only.
    regs = [reg("b.py", 10), reg("a.py", 10), reg("c.py", 30), reg("d.py", 20)]
    assert [j.path for j in select_jobs(regs, [S]).jobs] == ["c.py", "d.py", "a.py", "b.py"]
    regs.append(reg("off.py", 1, disabled="x"))
    first = select_jobs(regs, [S], partition=(0, 2))
    second = select_jobs(regs, [S], partition=(1, 2))
    assert [j.path for j in first.jobs] == ["c.py", "b.py"]
    assert [j.path for j in second.jobs] == ["d.py", "a.py"]
    assert [s.path for s in first.skipped] == ["off.py"] and second.skipped == []


def test_usage_errors():
    with pytest.raises(SelectionError) as err:
        select_jobs(REGS)
    assert str(err.value) == "nothing selected: give --suite SUITE or SPEC paths"
    with pytest.raises(SelectionError) as err:
        select_jobs(REGS, ["nope"])
    assert str(err.value) == f"unknown suite 'nope' (known: '{S}', '{T}')"
    with pytest.raises(SelectionError) as err:
        select_jobs([reg("n.py", 5, nightly=True)], [S])
    assert str(err.value) == (
        f"{S}: only nightly=True registrations (1 file(s)); add --nightly to run them"
    )
    assert suite_pool([reg("n.py", 5, nightly=True)], [S], nightly=True)[0].file == "n.py"
    assert Job("x.py", 1.0).selection == []


def test_shards_follow_lpt():
    # 3 3 2 2 2 in two shards: LPT gives 3+2+2 | 3+2.
    regs = [reg(f"{n}.py", w) for n, w in zip("abcde", [3, 3, 2, 2, 2], strict=True)]
    assert [j.path for j in select_jobs(regs, [S], partition=(0, 2)).jobs] == [
        "a.py",
        "c.py",
        "e.py",
    ]


def test_suite_pool_leaves_nightly_registrations_out_by_default():
    regs = [reg("a.py", 5), reg("n.py", 5, nightly=True)]
    assert [r.file for r in suite_pool(regs, [S])] == ["a.py"]


def test_suites_run_in_the_glob_order_and_unfound_files_last():
    # Registered b, a, c, z; longest first would be a, c, b, z; the glob found c, b, a.
    regs = [reg("b.py", 10), reg("a.py", 30), reg("c.py", 20), reg("z.py", 5)]
    order = {"c.py": 0, "b.py": 1, "a.py": 2}
    assert [j.path for j in select_jobs(regs, [S], order=order).jobs] == [
        "c.py",
        "b.py",
        "a.py",
        "z.py",
    ]
    # A shard keeps its planned order: the glob order does not apply.
    shard = select_jobs(regs, [S], partition=(0, 2), order=order).jobs
    assert [j.path for j in shard] == ["a.py", "z.py"]


def test_weights_split_unregistered_spec_files_under_an_empty_suite():
    sel = [
        [j.path for j in select_jobs(
            REGS, specs=["a.py", "mm/test_x.py"], partition=(i, 2),
            weights={("mm/test_x.py", ""): 1000.0}, extra=["mm/test_x.py"],
        ).jobs]
        for i in range(2)
    ]  # fmt: skip
    assert sel == [["mm/test_x.py"], ["a.py"]]


def test_empty_disabled_reason_reads_disabled():
    sel = select_jobs([reg("a.py", 5), reg("off.py", 5, disabled="")], [S])
    assert sel.skipped == [Skipped("off.py", S, "cuda", 5, "disabled")]


def test_empty_selection_names_the_flag_and_counts_the_selected_suites_only():
    per_commit = [reg("a.py", 5), reg("a.py", 5, line=2), reg("b.py", 5), reg("n.py", 5, suite=T),
                  reg("o.py", 5, suite="stage-d-test-cpu")]  # fmt: skip
    with pytest.raises(SelectionError) as err:
        select_jobs(per_commit, [S, T], nightly=True)
    assert str(err.value) == (
        f"{S}, {T}: no nightly=True registrations (3 per-commit file(s) are registered); "
        "drop --nightly to run them"
    )
    nightly = [reg("n.py", 5, nightly=True), reg("m.py", 5, suite=T, nightly=True),
               reg("o.py", 5, suite="stage-d-test-cpu", nightly=True)]  # fmt: skip
    with pytest.raises(SelectionError) as err:
        select_jobs(nightly, [S, T])
    assert str(err.value) == (
        f"{S}, {T}: only nightly=True registrations (2 file(s)); add --nightly to run them"
    )


def test_empty_selection_without_a_suite_of_the_other_kind_names_what_was_asked():
    # Not reachable through select_jobs (an empty suite always has files of the other kind).
    assert _nothing([], [S], [], False) == f"no registered files for {S}"
    assert _nothing([reg("n.py", 5, nightly=True)], [], ["n.py"], False) == (
        "no registered files for n.py"
    )
