from __future__ import annotations

import pytest

from ci_budget.config import ConfigError
from ci_budget.workspace.project import load_config


def test_zero_config_follows_sglang_conventions(tmp_path):
    config = load_config(tmp_path)
    assert config.test_globs == ["test/registered/**/*.py"]
    large = config.runner("1-gpu-large")
    assert large.runs_on == ["self-hosted", "1-gpu-large"] and large.gpus == 1
    assert large.arch == "sm90"
    assert config.runner("1-gpu-small").arch == "sm120"
    assert config.runner("4-gpu-b200").arch == "sm100" and config.runner("4-gpu-b200").gpus == 4
    assert config.runner("8-gpu-h200").arch == "sm90"
    assert config.thresholds.near == 0.8 and config.thresholds.stale == 0.5
    assert config.mode == "pytest"


def test_per_commit_file_timeout_by_default_est_time_rule_when_asked(tmp_path):
    config = load_config(tmp_path)
    assert config.timeout_for(790) == 1200  # run_suite.py's --timeout-per-file default
    (tmp_path / "ci-budget.toml").write_text('file-timeout = "est-time"\n')
    config = load_config(tmp_path)
    assert config.timeout_for(790) == 790 + 1800
    assert config.timeout_for(4000) == 6000
    assert config.timeout_for(790.5) == 790.5 + 1800  # sglang's float rule, not rounded
    (tmp_path / "ci-budget.toml").write_text(
        "file-timeout = 120\n[suite-file-timeouts]\n"
        '"base-c-*" = 3600\nbase-b-test-1-gpu-large = "est-time"\n'
    )
    config = load_config(tmp_path)
    assert config.timeout_for(790) == 120
    assert config.timeout_for(790, "base-c-test-8-gpu-b300") == 3600
    assert config.timeout_for(790, "base-b-test-1-gpu-large") == 2590
    assert config.timeout_for(790, "base-b-test-2-gpu-large") == 120


def test_pyproject_section_overrides_and_adds_runner_configs(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n"
        "[tool.ci-budget]\nmode = 'script'\n"
        "[tool.ci-budget.runner-configs.1-gpu-large]\nruns-on = ['self-hosted', 'h100']\n"
        "arch = 'sm90'\n"
        "[tool.ci-budget.runner-configs.2-gpu-mi300]\nruns-on = ['mi300']\ngpus = 2\n"
        "arch = 'gfx942'\n"
        "[tool.ci-budget.stage-timeouts]\nbase-b = 45\n"
    )
    config = load_config(tmp_path)
    assert config.mode == "script"
    assert config.runner("1-gpu-large").runs_on == ["self-hosted", "h100"]
    assert config.runner("2-gpu-mi300").gpus == 2
    assert config.runner("8-gpu-h200") is not None  # defaults kept beside user entries
    assert config.stage_timeout_s("base-b") == 45 * 60
    assert config.stage_timeout_s("other") == 60 * 60


def test_ci_budget_toml_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ci-budget]\nmode = 'script'\n")
    (tmp_path / "ci-budget.toml").write_text("mode = 'pytest'\n")
    assert load_config(tmp_path).mode == "pytest"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[thresholds]\nnear = 'high'\n", "ci-budget.toml: thresholds.near:"),
        ("unknown-key = 1\n", "ci-budget.toml: unknown-key: unknown key"),
        (
            "test_globs = ['x']\n",
            "ci-budget.toml: test_globs: unknown key; did you mean `test-globs`?",
        ),
        (
            "[github]\nrun_drafts = true\n",
            "ci-budget.toml: github.run_drafts: unknown key; did you mean `run-drafts`?",
        ),
        ("not_a_key = 1\n", "ci-budget.toml: not_a_key: unknown key"),
        (
            "[planner]\nalgoritm = 'best'\n",
            "ci-budget.toml: planner.algoritm: unknown key; did you mean `algorithm`?",
        ),
        (
            "[stage-timeouts]\nbase-b = -5\n",
            "ci-budget.toml: stage-timeouts.base-b: Input should be greater than 0",
        ),
        (
            "[stage-timeouts]\nbase-b = 0\n",
            "ci-budget.toml: stage-timeouts.base-b: Input should be greater than 0",
        ),
        (
            "[thresholds]\nnear = 1.5\nover = 1.0\n",
            "ci-budget.toml: thresholds: near (1.5) must be below over (1)",
        ),
        (
            "[thresholds]\nnear = 1.0\n",
            "ci-budget.toml: thresholds: near (1) must be below over (1)",
        ),
        (
            "[thresholds]\nstale = 0.9\n",
            "ci-budget.toml: thresholds: stale (0.9) must be below near (0.8)",
        ),
        ("file-timeout = -3\n", "ci-budget.toml: file-timeout"),
        ('file-timeout = "sglang"\n', "ci-budget.toml: file-timeout"),  # now "est-time"
        ("[suite-file-timeouts]\nx = 0\n", "ci-budget.toml: suite-file-timeouts: x: must be"),
        ("[runner-configs.x]\ngpus = -1\n", "ci-budget.toml: runner-configs.x.gpus:"),
        ("mode = [\n", "ci-budget.toml: invalid TOML"),
    ],
)
def test_errors_name_file_and_key(tmp_path, text, expected):
    (tmp_path / "ci-budget.toml").write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path)
    assert expected in str(exc.value)


def test_pyproject_errors_are_prefixed_with_the_section(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ci-budget]\nmode = 'docker'\n")
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path)
    assert "pyproject.toml: [tool.ci-budget].mode:" in str(exc.value)


def test_explicit_config_path(tmp_path):
    path = tmp_path / "elsewhere.toml"
    path.write_text("test-globs = ['tests/**/*.py']\n")
    assert load_config(tmp_path, path).test_globs == ["tests/**/*.py"]


def test_snake_case_gets_no_suggestion_for_an_unknown_name(tmp_path):
    (tmp_path / "ci-budget.toml").write_text("not_a_key = 1\n")
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path)
    assert "did you mean" not in str(exc.value)


def test_bad_stage_timeout_is_a_one_line_cli_error(tmp_path):
    import subprocess
    import sys

    (tmp_path / "ci-budget.toml").write_text("[stage-timeouts]\nbase-b = -5\n")
    done = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"ci-budget scan: {tmp_path / 'ci-budget.toml'}: stage-timeouts.base-b: "
        "Input should be greater than 0"
    ]
