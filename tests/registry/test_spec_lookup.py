"""How `/rerun-test` paths, names and globs find test files (registry/lookup.py), as sglang's
handler finds them: globs as `glob.glob(..., recursive=True)` under its roots, folders a glob
matches taken whole, the multimodal-style rerun folders and their path routing."""

from __future__ import annotations

from functools import partial

import pytest
from helpers import registry

from ci_budget.ciprofile.sglang_py import rerun_dirs, rerun_rules
from ci_budget.config import parse_config
from ci_budget.registry.lookup import Registry, glob_hits, prefixes
from ci_budget.registry.specs import resolve

R = "test/registered/"
MM = "python/pkg/mm/test"


reg = partial(registry.reg, est=10, stage="base")


CONFIG = parse_config(
    {
        "github": {
            "backends": ["cuda", "cpu"],
            "rerun-dirs": {MM: {"runner": "1-gpu-large",
                                "path-runners": {"2_gpu": "2-gpu-large", "b200": "4-gpu-b200"}}},
        },
        "suite-runners": {"base-a-test-cpu": "cpu"},
    },
    "t",
)  # fmt: skip
REGS = [
    reg(R + "attention/test_fa.py"),
    reg(R + "attention/test_fa_backend.py", runner="4-gpu-b200"),
    reg(R + "attention/deep/test_deep.py"),
    reg(R + "attention/helpers.py"),
    reg(R + "hicache/test_store_backend.py", runner="2-gpu-large"),
    reg(R + "hicache/test_amd_backend.py", legacy=True, backend="amd", suite="amd-x"),
    reg(R + "cpu/test_cpu_backend.py", legacy=True, backend="cpu", suite="base-a-test-cpu"),
    reg(R + "cpu/test_cpu_other.py", legacy=True, backend="cpu", suite="base-c-test-cpu"),
    reg(R + "both/test_both.py", runner="1-gpu-large"),
    reg(R + "both/test_both.py", legacy=True, backend="cpu", suite="base-a-test-cpu"),
    reg(R + "legacy/test_legacy.py", legacy=True, suite="per-commit-8-gpu"),
    reg("python/pkg/kernels/tests/test_kernel.py"),
]
FILES = [f"{MM}/server/test_server_2_gpu.py", f"{MM}/server/test_server_b200.py",
         f"{MM}/unit/test_mm_backend.py", "elsewhere/test_ignored.py"]  # fmt: skip


def registry():
    return Registry(REGS, CONFIG, FILES)


@pytest.mark.parametrize(
    "pattern, path, hit",
    [
        ("test_*.py", "test_a.py", True),
        ("test_*.py", "d/test_a.py", False),  # `*` never crosses a folder
        ("**/test_*.py", "d/e/test_a.py", True),
        ("**/test_*.py", "test_a.py", True),  # `**` is zero folders too
        ("d/*", "d/e/test_a.py", True),  # a matched folder is taken whole
        ("d/test_[ab].py", "d/test_b.py", True),
        ("d/test_[ab].py", "d/test_c.py", False),
        ("d/test_?.py", "d/test_ab.py", False),
        ("e/*", "d/e/test_a.py", False),  # anchored at the start
        ("d", "d/e/test_a.py", True),  # the first folder alone
        ("d/e/test_a.py", "d/e/test_a.py", True),  # the whole path
        ("d/e/test_a.py/x", "d/e/test_a.py", False),  # never past its end
        ("**", "d/e/test_a.py", True),
        ("**/**", "test_a.py", True),
        ("e/**", "d/e/test_a.py", False),  # `**` after a folder that matched nothing
    ],
)
def test_glob_hits_reads_patterns_as_glob_does(pattern, path, hit):
    assert glob_hits(pattern, path) is hit


def test_prefixes_are_the_folder_and_its_tails_of_two_parts_or_more():
    assert prefixes("python/sglang/multimodal_gen/test") == [
        "python/sglang/multimodal_gen/test", "sglang/multimodal_gen/test", "multimodal_gen/test",
    ]  # fmt: skip
    assert prefixes("/a/b/") == ["a/b"]
    assert prefixes("a") == ["a"]


def test_a_bare_glob_searches_the_test_root_and_the_rerun_folders_for_test_files():
    assert registry().expand("test_*backend*.py") == [
        f"{MM}/unit/test_mm_backend.py",
        R + "attention/test_fa_backend.py",
        R + "cpu/test_cpu_backend.py",
        R + "hicache/test_amd_backend.py",
        R + "hicache/test_store_backend.py",
    ]
    tests = {r.file for r in REGS if "/test_" in r.file and r.file.startswith(R)}
    assert registry().expand("*.py") == sorted([*tests, *FILES[:3]])  # test_*.py under roots


def test_a_glob_with_a_folder_is_anchored_at_the_root_or_at_test():
    want = [R + "attention/deep/test_deep.py", R + "attention/test_fa.py",
            R + "attention/test_fa_backend.py"]  # fmt: skip
    assert registry().expand("registered/attention/*") == want
    assert registry().expand("test/registered/attention/*") == want
    assert registry().expand(R + "attention/test_*.py") == want[1:]
    assert registry().expand("attention/test_*.py") == []  # not from the test root
    assert registry().expand(f"{MM}/server/test_*.py") == FILES[:2]
    assert registry().expand("hicache*") == [R + "hicache/test_amd_backend.py",
                                             R + "hicache/test_store_backend.py"]  # fmt: skip


def test_a_glob_resolves_file_by_file_and_refuses_only_what_cannot_run():
    res = resolve(["`test_*backend*.py`"], REGS, CONFIG, files=FILES)
    assert [(r.file, r.runner_configs) for r in res.accepted] == [
        (f"{MM}/unit/test_mm_backend.py", ("1-gpu-large",)),
        (R + "attention/test_fa_backend.py", ("4-gpu-b200",)),
        (R + "cpu/test_cpu_backend.py", ("cpu",)),
        (R + "hicache/test_store_backend.py", ("2-gpu-large",)),
    ]
    assert res.refused_specs == [R + "hicache/test_amd_backend.py"]
    (why,) = resolve(["test_zz*.py"], REGS, CONFIG, files=FILES).refused
    assert why == (f"`test_zz*.py`: no test file matches `test_zz*.py` under `{R}` or `{MM}/` "
                   "(a glob matches `test_*.py` files only)")  # fmt: skip
    (why,) = resolve(["zz/test_*.py"], REGS, CONFIG).refused
    assert "from the repository root or `test/` " in why


@pytest.mark.parametrize(
    "spec, file",
    [
        ("registered/attention/test_fa.py", R + "attention/test_fa.py"),  # from test/
        ("attention/test_fa.py", R + "attention/test_fa.py"),  # from the test root
        ("test_deep.py", R + "attention/deep/test_deep.py"),
        (f"{MM}/server/test_server_b200.py", f"{MM}/server/test_server_b200.py"),
        ("pkg/mm/test/server/test_server_b200.py", f"{MM}/server/test_server_b200.py"),
        ("mm/test/server/test_server_b200.py", f"{MM}/server/test_server_b200.py"),
        ("test_server_2_gpu.py", f"{MM}/server/test_server_2_gpu.py"),
        ("test_kernel.py", "python/pkg/kernels/tests/test_kernel.py"),  # outside the roots
    ],
)
def test_paths_and_names_find_one_file(spec, file):
    assert registry().find(spec) == file


def test_a_rerun_folder_prefix_never_falls_through_to_other_lookups():
    assert registry().find("mm/test/server/test_nope.py") == []
    assert registry().find("elsewhere/test_ignored.py") == []  # not in a rerun folder


def test_runner_configs_follow_sglangs_precedence():
    r = registry()
    assert r.runner_configs(f"{MM}/server/test_server_2_gpu.py") == ("2-gpu-large",)
    assert r.runner_configs(f"{MM}/server/test_server_b200.py") == ("4-gpu-b200",)
    assert r.runner_configs(f"{MM}/unit/test_mm_backend.py") == ("1-gpu-large",)
    assert r.runner_configs(R + "both/test_both.py") == ("1-gpu-large",)  # runner_config wins
    assert r.runner_configs(R + "cpu/test_cpu_backend.py") == ("cpu",)  # its suite's runner
    assert r.runner_configs(R + "cpu/test_cpu_other.py") == ("cpu",)  # named like its backend
    assert r.runner_configs(R + "legacy/test_legacy.py") == (
        "registered in suite 'per-commit-8-gpu' without a runner_config; "
        "cannot tell which runner to use"
    )


HANDLER = """
_B200 = "4-gpu-b200"
MULTIMODAL_TEST_DIR = "python/pkg/mm/test/"
MULTIMODAL_PATH_TO_RUNNER = {"2_gpu": "2-gpu-h100", "b200": _B200, "odd": f"x"}
MULTIMODAL_DEFAULT_RUNNER = "1-gpu-h100"
"""


def test_the_handlers_rules_are_read_and_labels_become_runner_configs():
    assert rerun_rules(HANDLER) == {"dir": MM, "default": "1-gpu-h100",
                                    "paths": {"2_gpu": "2-gpu-h100", "b200": "4-gpu-b200"}}  # fmt: skip
    runners = {
        "1-gpu-large": {"runs-on": ["1-gpu-h100"]},
        "4-gpu-b200": {"runs-on": ["4-gpu-b200"]},
    }
    assert rerun_dirs(HANDLER, runners) == {
        MM: {"runner": "1-gpu-large", "path-runners": {"2_gpu": "2-gpu-h100", "b200": "4-gpu-b200"}}
    }
    assert runners["2-gpu-h100"] == {"runs-on": ["2-gpu-h100"], "gpus": 2}  # no config ran there
    assert rerun_rules("MULTIMODAL_TEST_DIR = 'x'") is None  # an older handler: no such folder
    assert rerun_rules("def (") is None and rerun_dirs(None, runners) == {}


def test_a_glob_of_many_double_stars_is_matched_in_one_pass():
    # Comment text chooses the glob; a backtracking matcher would not finish on these.
    path = "/".join(["d"] * 30) + "/test_x.py"
    assert glob_hits("/".join(["**"] * 60) + "/test_x.py", path)
    assert glob_hits("/".join(["**", "d"] * 30) + "/test_*.py", path)
    assert not glob_hits("/".join(["**", "d"] * 31) + "/test_*.py", path)
    assert registry().expand("/".join(["**"] * 60)) == registry().expand("**")


def test_legacy_suites_rerun_on_the_handlers_runner_configs_before_any_cpu_route():
    from ci_budget.ciprofile.sglang_py import legacy_suites

    handler = '_LEGACY_SUITE_TO_RUNNER_CONFIG = {"nightly-4-gpu": "4-gpu-h100", ' \
        '"nightly-8-gpu-common": ["8-gpu-h200", "8-gpu-b200"], "odd": [1]}'  # fmt: skip
    table = legacy_suites(handler)
    assert table == {
        "nightly-4-gpu": ["4-gpu-h100"],
        "nightly-8-gpu-common": ["8-gpu-h200", "8-gpu-b200"],
    }
    assert legacy_suites("x = (") == {} and legacy_suites(None) == {}
    config = CONFIG.model_copy(deep=True)
    config.github.rerun_suites = table
    regs = [
        reg(R + "n/test_n.py", legacy=True, suite="nightly-8-gpu-common", nightly=True),
        reg(R + "n/test_n.py", legacy=True, backend="cpu", suite="base-a-test-cpu"),
        reg(R + "n/test_other.py", legacy=True, suite="nightly-unknown"),
    ]
    r = Registry(regs, config)
    assert r.runner_configs(R + "n/test_n.py") == ("8-gpu-h200", "8-gpu-b200")  # not cpu
    assert "without a runner_config" in r.runner_configs(R + "n/test_other.py")


def test_a_glob_matches_folders_below_its_root_never_the_roots_own_names():
    """The test root's own folders (`test/registered`) and a rerun folder's path above its
    files are not part of what a bare glob matches: sglang globs inside those folders."""
    r = registry()
    assert r.expand("registered") == []
    assert r.expand("d") == []  # the last letter of `registered`
    assert r.expand("deep") == [R + "attention/deep/test_deep.py"]
    assert r.expand("server") == FILES[:2]
    assert r.expand("mm") == []
    # A rerun folder's file is matched as written from the repository root, never as a path
    # cut at the length of `test/`.
    assert r.expand("n/pkg/mm/test/server/test_*.py") == []
    assert r.expand("python/pkg/mm/test/server/test_*.py") == FILES[:2]


def test_a_glob_written_from_the_repository_root_reaches_the_rerun_folders_too():
    """`test/…` is read from `test/` (sglang's handler runs there): the pattern after it is
    matched under the test root and the rerun folders alike."""
    r = registry()
    assert r.expand("test/**/test_server_b200.py") == [f"{MM}/server/test_server_b200.py"]
    assert r.expand("test/**/test_deep.py") == [R + "attention/deep/test_deep.py"]


def test_with_the_repository_as_test_root_a_bare_glob_sees_whole_paths():
    config = parse_config({"test-root": ""}, "t")
    r = Registry([reg("test/x/test_a.py"), reg("src/test_b.py")], config)
    assert r.expand("test_*.py") == ["src/test_b.py", "test/x/test_a.py"]
    assert r.expand("x") == ["test/x/test_a.py"]
    assert r.expand("est*") == []  # never a path with its first letter cut


def test_a_suite_without_a_runner_config_is_routed_by_the_suite_runners_table():
    config = parse_config(
        {"github": {"backends": ["cuda", "cpu"]},
         "suite-runners": {"nightly-x": "2-gpu-large", "*": "8-gpu-h200"}}, "t",
    )  # fmt: skip
    regs = [
        reg(R + "n/test_n.py", legacy=True, suite="nightly-x"),
        reg(R + "c/test_c.py", legacy=True, backend="cpu", suite=""),
        reg(R + "z/test_z.py", legacy=True, backend="cuda", suite=""),
    ]
    r = Registry(regs, config)
    assert r.runner_configs(R + "n/test_n.py") == ("2-gpu-large",)  # the suite's runner
    # No suite: routed by the backend's name alone, never by a suite pattern such as `*`.
    assert r.runner_configs(R + "c/test_c.py") == ("cpu",)
    assert r.runner_configs(R + "z/test_z.py") == (
        "registered in suite '' without a runner_config; cannot tell which runner to use"
    )
