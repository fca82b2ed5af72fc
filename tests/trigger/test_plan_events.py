"""Reading the runner environment and the event file."""

from __future__ import annotations

import pytest

from ci_budget.github.events import EventError, load_payload, runner_env


def test_runner_env_defaults_and_token_kept_out_of_repr():
    env = runner_env({"GITHUB_TOKEN": "ghs_secret", "GITHUB_API_URL": "http://127.0.0.1:1/"})
    assert env.api_url == "http://127.0.0.1:1" and env.server_url == "https://github.com"
    assert env.token == "ghs_secret" and "ghs_secret" not in repr(env)
    assert env.event_name is None and env.run_url is None
    env = runner_env({"GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "5", "GITHUB_EVENT_NAME": ""})
    assert env.run_url == "https://github.com/o/r/actions/runs/5" and env.event_name is None


def test_payload_errors_name_the_event_and_the_file(tmp_path):
    with pytest.raises(EventError, match="^push: GITHUB_EVENT_PATH is not set$"):
        load_payload("push", None)
    with pytest.raises(EventError, match=f"^push: cannot read {tmp_path}/none.json: "):
        load_payload("push", str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{")
    with pytest.raises(EventError, match=f"^push: {bad} is not JSON: "):
        load_payload("push", str(bad))
    bad.write_text('"text"')
    with pytest.raises(EventError, match="holds a JSON str, not an object"):
        load_payload("push", str(bad))
    bad.write_text('{"action": "opened"}')
    assert load_payload("push", str(bad)) == {"action": "opened"}
