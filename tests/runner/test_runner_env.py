"""The tests' environment: a real test process prints what it sees; credentials and the runner's
file-command paths are gone, what model tests need is still there."""

from __future__ import annotations

import json
from pathlib import Path

from ci_budget.cli import main
from ci_budget.runner.command import DEFAULT_DROP, scrubbed_env

DUMP = """\
import json, os, unittest


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=60, stage="base-b", runner_config="1-gpu-large")


class TestEnv(unittest.TestCase):
    def test_dump(self):
        with open(os.environ["ENV_DUMP"], "w") as fh:
            json.dump(dict(os.environ), fh)


if __name__ == "__main__":
    unittest.main()
"""

RUNNER = {  # what an Actions job's step environment holds
    "GITHUB_TOKEN": "ghs_job_token",
    "GH_TOKEN": "ghs_job_token",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token",
    "ACTIONS_RUNTIME_URL": "https://pipelines.example/",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-token",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://oidc.example/",
    "ACTIONS_CACHE_URL": "https://cache.example/",
    "ACTIONS_RESULTS_URL": "https://results.example/",
    "INPUT_GITHUB-TOKEN": "ghs_job_token",
    "INPUT_SPECS": "x",
    "GITHUB_REPOSITORY": "octo-org/hello-gpu",
    "GITHUB_SHA": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
    "HF_TOKEN": "hf_model_download",
    "CUDA_VISIBLE_DEVICES": "0,1",
    "HTTPS_PROXY": "http://proxy.example:3128",
    "no_proxy": "localhost",
    "MY_SERVICE_TOKEN": "ours",
}
FILE_COMMANDS = [
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
]


def _run(tmp_path: Path, monkeypatch, config: str = "", *args: str) -> dict[str, str]:
    repo = tmp_path / "repo"
    test = repo / "test" / "registered" / "test_env_dump.py"
    test.parent.mkdir(parents=True)
    test.write_text(DUMP)
    (repo / "ci-budget.toml").write_text(config)
    for name, value in RUNNER.items():
        monkeypatch.setenv(name, value)
    for name in FILE_COMMANDS:  # the runner's command files: writable by whoever has the path
        path = tmp_path / name.lower()
        path.write_text("")
        monkeypatch.setenv(name, str(path))
    dump = tmp_path / "env.json"
    monkeypatch.setenv("ENV_DUMP", str(dump))
    rc = main(["run", "--root", str(repo), "--out", str(tmp_path / "r.json"), "--suite",
               "base-b-test-1-gpu-large", *args])  # fmt: skip
    assert rc == 0
    return json.loads(dump.read_text())


def test_the_test_process_sees_no_credential_and_no_runner_command_file(tmp_path, monkeypatch):
    seen = _run(tmp_path, monkeypatch)
    for name in [*FILE_COMMANDS, "GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN",
                 "ACTIONS_RUNTIME_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                 "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL",
                 "INPUT_GITHUB-TOKEN", "INPUT_SPECS"]:  # fmt: skip
        assert name not in seen, name
    assert "ghs_job_token" not in json.dumps(seen)
    for name in ["HF_TOKEN", "CUDA_VISIBLE_DEVICES", "HTTPS_PROXY", "no_proxy", "MY_SERVICE_TOKEN",
                 "GITHUB_REPOSITORY", "GITHUB_SHA", "PATH"]:  # fmt: skip
        assert name in seen, name
    assert seen["HF_TOKEN"] == "hf_model_download"
    for name in FILE_COMMANDS:  # and nothing was written through them
        assert (tmp_path / name.lower()).read_text() == ""


def test_env_drop_and_env_keep_come_from_the_workflow_never_from_the_config_file(
    tmp_path, monkeypatch, capsys
):
    config = 'env-drop = ["HF_TOKEN", "CUDA_*"]\nenv-keep = ["GH_TOKEN", "ACTIONS_*", "GITHUB_*"]\n'
    seen = _run(tmp_path, monkeypatch, config, "--env-drop", "MY_SERVICE_*")
    assert "the config file's env-drop and env-keep are ignored" in capsys.readouterr().err
    assert "MY_SERVICE_TOKEN" not in seen  # the workflow's
    assert seen["HF_TOKEN"] == "hf_model_download" and "CUDA_VISIBLE_DEVICES" in seen
    for name in ["GH_TOKEN", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", *FILE_COMMANDS]:
        assert name not in seen, name


def test_a_token_under_another_name_goes_too(monkeypatch):
    env = {"GITHUB_TOKEN": "ghs_job_token_value", "MY_PAT": "x ghs_job_token_value", "A": "b"}
    assert scrubbed_env(env, keep=["*"]) == {"A": "b"}


def test_scrub_is_by_name_and_pattern():
    env = {"GITHUB_TOKEN": "t", "INPUT_X": "i", "github_token": "lower", "CUDA_HOME": "/c"}
    assert scrubbed_env(env) == {"github_token": "lower", "CUDA_HOME": "/c"}
    assert scrubbed_env(env, drop=["CUDA_*"], keep=["GITHUB_TOKEN", "INPUT_X"]) == {
        "github_token": "lower",
    }
    assert "GITHUB_TOKEN" in DEFAULT_DROP and "INPUT_*" in DEFAULT_DROP


def test_env_keep_cannot_bring_back_the_runners_credentials_or_file_commands(tmp_path, monkeypatch):
    """Not even the workflow's `--env-keep "*"` hands the tests the job token, the runtime token
    (cache writes in the default branch's scope), OIDC or the file commands."""
    seen = _run(tmp_path, monkeypatch, "", "--env-keep", "*")
    for name in [*FILE_COMMANDS, "ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL",
                 "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
                 "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL", "INPUT_SPECS"]:  # fmt: skip
        assert name not in seen, name
    assert "GITHUB_TOKEN" not in seen and "GH_TOKEN" not in seen
    assert seen["MY_SERVICE_TOKEN"] == "ours"


def test_an_install_steps_own_file_commands_are_read_as_the_runner_reads_them():
    from ci_budget.runner.command import step_file_env

    env_text = "A=1\nNOTES<<EOF\nline one\nline=two\nEOF\nB=x=y\n"
    got = step_file_env(env_text, "/venv/bin\n/opt/bin\n", {"PATH": "/usr/bin"})
    assert got == {"A": "1", "NOTES": "line one\nline=two", "B": "x=y",
                   "PATH": "/opt/bin:/venv/bin:/usr/bin"}  # fmt: skip
