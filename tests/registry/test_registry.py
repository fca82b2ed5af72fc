"""Registry semantics: the corpus under fixtures/registry_corpus mixes every registration form."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ci_budget.config import Config, parse_config
from ci_budget.registry.parse import scan_source, select
from ci_budget.workspace.scan import discover, scan_tree

CORPUS = Path(__file__).parents[1] / "fixtures" / "registry_corpus"
R = "test/registered/"


def _records(scan):
    return [
        (
            r.file.removeprefix(R),
            r.line,
            r.backend,
            r.est_time,
            r.suite,
            r.stage,
            r.runner_config,
            r.nightly,
            r.disabled,
            r.in_process_group,
        )
        for r in scan.registrations
    ]


def test_corpus_scan_gives_exactly_the_expected_records():
    scan = scan_tree(CORPUS, Config())
    assert _records(scan) == [
        (
            "errors/test_errors.py",
            20,
            "cuda",
            5.0,
            "base-a-test-no-such-runner",
            "base-a",
            "no-such-runner",
            False,
            None,
            None,
        ),
        (
            "errors/test_errors.py",
            21,
            "cuda",
            5.0,
            "fine-after-all-errors",
            None,
            None,
            False,
            None,
            None,
        ),
        (
            "forms/test_keyword_stage.py",
            16,
            "cuda",
            790.0,
            "base-b-test-1-gpu-large",
            "base-b",
            "1-gpu-large",
            False,
            None,
            None,
        ),
        (
            "forms/test_keyword_stage.py",
            17,
            "amd",
            900.5,
            "stage-a-test-1-gpu-amd",
            None,
            None,
            False,
            None,
            None,
        ),
        (
            "forms/test_positional.py",
            5,
            "cpu",
            5.0,
            "base-a-test-cpu",
            None,
            None,
            False,
            None,
            None,
        ),
        (
            "forms/test_positional.py",
            6,
            "cuda",
            120.0,
            "nightly-1-gpu",
            None,
            None,
            True,
            "flaky on H20, see tracker",
            None,
        ),
        (
            "forms/test_positional.py",
            12,
            "cuda",
            300.0,
            "base-a-test-8-gpu-h200",
            "base-a",
            "8-gpu-h200",
            False,
            None,
            "kernels",
        ),
        (
            "forms/test_pytest_style.py",
            7,
            "cuda",
            60.0,
            "base-b-test-1-gpu-large",
            "base-b",
            "1-gpu-large",
            False,
            None,
            None,
        ),
        (
            "misc/test_disabled_no_main.py",
            3,
            "cuda",
            30.0,
            "base-c-test-1-gpu-large",
            "base-c",
            "1-gpu-large",
            False,
            "broken",
            None,
        ),
        (
            "misc/test_no_main.py",
            3,
            "cuda",
            30.0,
            "base-c-test-1-gpu-large",
            "base-c",
            "1-gpu-large",
            False,
            None,
            None,
        ),
        (
            "misc/test_not_registrations.py",
            8,
            "cuda",
            45.0,
            "per-commit-1-gpu",
            None,
            None,
            False,
            None,
            None,
        ),
    ]


def test_every_error_is_reported_with_path_line_col_in_one_pass():
    scan = scan_tree(CORPUS, Config())
    errors = [str(e).removeprefix(R) for e in scan.errors]
    f = "errors/test_errors.py"
    assert errors == [
        f"{f}:4:27: register_cuda_ci(): est_time must be a number of seconds, not True",
        f"{f}:5:27: register_cuda_ci(): est_time must be a number of seconds, not '60'",
        f"{f}:6:27: register_cuda_ci(): est_time must be >= 0, not -5",
        f"{f}:7:1: register_cuda_ci(): est_time is required",
        f"{f}:8:49: register_cuda_ci(): nightly must be a literal, not `FLAG` "
        "(registrations are read statically)",
        f"{f}:9:50: register_cuda_ci(): disabled must be a literal, not `REASON` "
        "(registrations are read statically)",
        f"{f}:10:49: register_cuda_ci(): nightly must be True or False, not 'yes'",
        f"{f}:11:36: register_cuda_ci(): suite must be a string, not 7",
        f"{f}:12:1: register_cuda_ci(): give exactly one of (stage= and runner_config=) or "
        "suite; got stage",
        f"{f}:13:1: register_cuda_ci(): give exactly one of (stage= and runner_config=) or "
        "suite; got stage, runner_config, suite",
        f"{f}:14:1: register_cuda_ci(): give exactly one of (stage= and runner_config=) or "
        "suite; got none of them",
        f"{f}:15:39: register_cuda_ci(): too many positional arguments (5; at most 4: est_time, "
        "suite, nightly, disabled; stage, runner_config, in_process_group are keyword-only)",
        f"{f}:16:26: register_cuda_ci(): argument 'est_time' given twice",
        f"{f}:17:41: register_cuda_ci(): unknown argument 'owner'",
        f"{f}:18:18: register_cuda_ci(): *args are not supported",
        f"{f}:19:20: register_cuda_ci(): **kwargs are not supported",
        "errors/test_syntax.py:3:17: cannot parse: '(' was never closed",
    ]


def test_warnings_name_what_sglang_would_silently_ignore():
    scan = scan_tree(CORPUS, Config())
    warnings = [(w.file.removeprefix(R), w.line, w.message) for w in scan.warnings]
    stray = "register_cuda_ci() is not at module top level as a statement on its own; it is not a registration"
    assert warnings == [
        (
            "errors/test_errors.py",
            20,
            "register_cuda_ci(): runner_config 'no-such-runner' is not "
            "a configured runner config (add it under [tool.ci-budget.runner-configs])",
        ),
        (
            "misc/test_no_main.py",
            3,
            'no `if __name__ == "__main__":` block that calls '
            "something; `python3 FILE` would run no test",
        ),
        ("misc/test_not_registrations.py", 11, stray),
        ("misc/test_not_registrations.py", 14, stray),
        ("misc/test_not_registrations.py", 20, stray),
        ("misc/test_not_registrations.py", 24, stray),
        ("misc/test_not_registrations.py", 27, stray),
        (
            "misc/test_not_registrations.py",
            28,
            "ci_register.register_cuda_ci() is an attribute "
            "call; only a bare register_cuda_ci() call is a registration",
        ),
        (
            "misc/test_unregistered.py",
            1,
            "no registration found (add a top-level register_*_ci(...) call)",
        ),
    ]


def test_conftest_and_init_are_not_test_files():
    files = discover(CORPUS, Config())
    assert R + "misc/conftest.py" not in files
    assert R + "misc/__init__.py" not in files
    assert R + "misc/test_unregistered.py" in files


def test_missing_main_block_can_be_an_error():
    config = parse_config({"main-block": "error"}, "ci-budget.toml")
    scan = scan_tree(CORPUS, config)
    assert any(
        e.file.endswith("misc/test_no_main.py") and "__main__" in e.message for e in scan.errors
    )


def test_disabled_registration_needs_no_main_block():
    src = 'register_cuda_ci(est_time=3, suite="s", disabled="off")\n'
    scan = scan_source(src, "t.py", Config())
    assert scan.errors == [] and scan.warnings == []
    assert scan.registrations[0].disabled == "off"


def test_explicit_none_means_not_given():
    src = 'register_cuda_ci(5, "s", False, None, in_process_group=None)\nif __name__ == "__main__":\n    main()\n'
    scan = scan_source(src, "t.py", Config())
    assert scan.errors == []
    assert scan.registrations[0].disabled is None


def test_signed_and_float_literals():
    src = "register_cuda_ci(+12.5, 's')\nregister_cuda_ci(-1, 's')\n"
    scan = scan_source(src, "t.py", Config())
    assert [r.est_time for r in scan.registrations] == [12.5]
    assert [e.message for e in scan.errors] == ["register_cuda_ci(): est_time must be >= 0, not -1"]


def test_custom_registration_names_map_to_backends():
    config = parse_config({"register-functions": {"register_tpu_ci": "tpu"}}, "x.toml")
    scan = scan_source("register_tpu_ci(5, 'tpu-suite')\n", "t.py", config)
    assert scan.registrations[0].backend == "tpu"
    # the defaults are replaced, not merged: a custom table is the whole list
    assert scan_source("register_cuda_ci(5, 's')\n", "t.py", config).registrations == []


def test_select_filters_by_suite_stage_runner_and_backend():
    scan = scan_tree(CORPUS, Config())
    assert {r.file for r in select(scan, suites=["base-b-test-1-gpu-large"])} == {
        R + "forms/test_keyword_stage.py",
        R + "forms/test_pytest_style.py",
    }
    assert [r.backend for r in select(scan, backends=["amd"])] == ["amd"]
    assert [r.est_time for r in select(scan, stages=["base-a"], runner_configs=["8-gpu-h200"])] == [
        300.0
    ]


def test_non_utf8_and_null_bytes_are_errors_not_crashes():
    scan = scan_source(b"register_cuda_ci(5, 's')\x00\n", "t.py", Config())
    assert scan.errors and scan.errors[0].message.startswith("cannot parse")


@pytest.fixture
def cli():
    def run(*args, cwd=None):
        return subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
        )

    return run


def test_scan_cli_json_and_exit_status(cli):
    proc = cli("scan", "--root", str(CORPUS), "--format", "json", "--backend", "cpu")
    assert proc.returncode == 1  # the corpus has errors
    payload = json.loads(proc.stdout)
    assert set(payload) == {"registrations", "errors", "warnings"}
    assert [r["suite"] for r in payload["registrations"]] == ["base-a-test-cpu"]
    reg = payload["registrations"][0]
    for key in (
        "file",
        "line",
        "backend",
        "est_time",
        "suite",
        "stage",
        "runner_config",
        "nightly",
        "disabled",
    ):
        assert key in reg
    assert {"file", "line", "col", "message"} <= set(payload["errors"][0])


def test_scan_cli_clean_tree_exits_zero(cli, tmp_path):
    (tmp_path / "test" / "registered").mkdir(parents=True)
    (tmp_path / "test" / "registered" / "test_ok.py").write_text(
        'register_cuda_ci(est_time=5, stage="base-a", runner_config="1-gpu-large")\n'
        'if __name__ == "__main__":\n    main()\n'
    )
    proc = cli("scan", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["registrations"][0]["file"] == "test/registered/test_ok.py"


def test_scan_cli_bad_config_names_file_and_key(cli, tmp_path):
    (tmp_path / "ci-budget.toml").write_text("[thresholds]\nnear = 'high'\n")
    proc = cli("scan", "--root", str(tmp_path))
    assert proc.returncode == 2
    assert "ci-budget.toml: thresholds.near:" in proc.stderr
