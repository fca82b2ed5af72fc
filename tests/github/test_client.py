"""GitHubClient against the local stand-in: retries, rate limits, identity, permissions, events."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN, PAT_TOKEN, READONLY_TOKEN

from ci_budget.app.settings import AppError, Settings, Sink
from ci_budget.config import Config
from ci_budget.github.actions import EventError
from ci_budget.github.client import GitHubClient, client_from_env
from ci_budget.github.retry import GitHubError, ReadOnlyToken
from ci_budget.github.sticky import upsert

WEBHOOKS = Path(__file__).parents[1] / "fixtures" / "github" / "webhooks"


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(standin, token=INSTALLATION_TOKEN, **kw):
    sleeps = Sleeps()
    client = GitHubClient(standin.state.repo, token, standin.url, sleep=sleeps, **kw)
    return client, sleeps


def test_pull_info_for_a_fork(github_standin):
    github_standin.add_pull(9, draft=True, labels=["run-ci", "gpu"], head_repo="someone/hello-gpu",
                            user="someone", head_sha="a" * 40)  # fmt: skip
    client, _ = make(github_standin)
    info = client.pull(9)
    assert (info.number, info.draft, info.head_sha, info.labels) == (
        9,
        True,
        "a" * 40,
        ["run-ci", "gpu"],
    )
    assert (info.head_repo, info.fork, info.user, info.base_ref) == (
        "someone/hello-gpu",
        True,
        "someone",
        "main",
    )
    assert client.calls == 1 == len(github_standin.calls())
    same = make(github_standin)[0].pull(github_standin.add_pull(10).number)
    assert same.fork is False and same.head_repo == github_standin.state.repo


@pytest.mark.parametrize(
    "role,expected",
    [
        ("admin", "admin"),
        ("maintain", "write"),
        ("write", "write"),
        ("triage", "read"),
        ("read", "read"),
    ],
)
def test_permission_mapping(github_standin, role, expected):
    github_standin.state.roles["alice"] = role
    client, _ = make(github_standin)
    assert client.permission("alice") == expected
    assert client.calls == 1


def test_permission_none_and_unknown_user(github_standin):
    github_standin.state.users.add("bob")
    client, _ = make(github_standin)
    assert client.permission("bob") == "none"  # GitHub answers permission "none"
    assert client.permission("ghost-user") == "none"  # GitHub answers 404
    assert [c["status"] for c in github_standin.calls()] == [200, 404]
    assert client.calls == 2


def test_server_error_then_success_is_retried(github_standin):
    github_standin.add_pull(3)
    github_standin.fail("pulls/get", 500)
    client, sleeps = make(github_standin)
    assert client.pull(3).number == 3
    assert sleeps == [1.0]
    assert client.calls == 2 == len(github_standin.calls())


def test_persistent_server_error_gives_up_with_backoff(github_standin):
    github_standin.add_pull(3)
    github_standin.fail("pulls/get", 502, "Bad Gateway", times=20)
    client, sleeps = make(github_standin)
    with pytest.raises(GitHubError) as err:
        client.pull(3)
    assert err.value.status == 502 and "Bad Gateway" in str(err.value)
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert client.calls == 6 == len(github_standin.calls())


def test_secondary_rate_limit_honours_retry_after(github_standin):
    github_standin.add_pull(4)
    github_standin.secondary_rate_limit("issues/create-comment", retry_after=7)
    client, sleeps = make(github_standin)
    comment_id = client.create_comment(4, "hello")
    assert sleeps == [7.0]
    assert client.calls == 2 == len(github_standin.calls())
    assert [c.id for c in github_standin.comments(4)] == [comment_id]


def test_429_honours_retry_after(github_standin):
    github_standin.add_pull(4)
    github_standin.too_many_requests("issues/list-comments", retry_after=3)
    client, sleeps = make(github_standin, comment_login=BOT_LOGIN)
    result = upsert(client, 4, "run", "report")
    assert sleeps == [3.0]
    assert result.action == "created" and result.calls == 4 == client.calls


def test_primary_rate_limit_waits_until_reset(github_standin):
    github_standin.add_pull(4)
    github_standin.primary_rate_limit("pulls/get", reset_epoch=1_000_010)
    client, sleeps = make(github_standin, clock=lambda: 1_000_000.0)
    assert client.pull(4).number == 4
    assert sleeps == [11.0]  # until the reset second, plus one
    assert client.calls == 2


def test_wait_longer_than_cap_fails_clearly(github_standin):
    github_standin.add_pull(4)
    github_standin.secondary_rate_limit("pulls/get", retry_after=120)
    client, sleeps = make(github_standin, rate_limit_cap=60)
    with pytest.raises(GitHubError) as err:
        client.pull(4)
    assert "120s" in str(err.value) and "cap of 60s" in str(err.value)
    assert sleeps == [] and client.calls == 1


def test_plain_4xx_fails_fast_with_githubs_message(github_standin):
    github_standin.add_pull(4)
    github_standin.fail("pulls/get", 403, "Must have admin rights to Repository.")
    client, sleeps = make(github_standin)
    with pytest.raises(GitHubError) as err:
        client.pull(4)
    assert err.value.status == 403 and "Must have admin rights" in str(err.value)
    with pytest.raises(GitHubError) as err:
        client.pull(404)
    assert err.value.status == 404 and "Not Found" in str(err.value)
    assert sleeps == [] and client.calls == 2


def test_read_only_token_raises_with_the_way_out(github_standin):
    github_standin.add_pull(5)
    client, _ = make(github_standin, token=READONLY_TOKEN)
    with pytest.raises(ReadOnlyToken) as err:
        client.create_comment(5, "hi")
    text = str(err.value)
    assert "step summary" in text and "artifact" in text and "pull_request_target" in text
    assert err.value.status == 403 and client.calls == 1
    assert github_standin.comments(5) == []


def test_installation_identity_comes_from_graphql_not_user(github_standin):
    client, _ = make(github_standin)
    assert client.identity() == BOT_LOGIN
    assert client.identity() == BOT_LOGIN  # cached
    assert [c["op"] for c in github_standin.calls()] == ["graphql"]
    again, _ = make(github_standin)  # same token and server: cached for the process
    assert again.identity() == BOT_LOGIN and again.calls == 0


def test_identity_falls_back_to_user_for_a_pat(github_standin):
    github_standin.fail("graphql", 401, "This endpoint requires you to be authenticated.")
    client, _ = make(github_standin, token=PAT_TOKEN)
    assert client.identity() == "ci-maintainer"
    assert [c["op"] for c in github_standin.calls()] == ["graphql", "users/get-authenticated"]


def test_configured_login_costs_nothing(github_standin):
    client, _ = make(github_standin, comment_login="my-app[bot]")
    assert client.identity() == "my-app[bot]" and client.calls == 0


def test_client_from_env_reads_config_and_requires_repo_and_token(github_standin):
    env = {"GITHUB_REPOSITORY": github_standin.state.repo, "GITHUB_API_URL": github_standin.url}
    config = Config.model_validate({"github": {"comment-login": "cfg[bot]", "rate-limit-cap": 5}})
    client = client_from_env(env, token=INSTALLATION_TOKEN, config=config)
    assert client.identity() == "cfg[bot]" and client.api_url == github_standin.url
    with pytest.raises(GitHubError, match="GITHUB_TOKEN"):
        client_from_env(env)
    with pytest.raises(GitHubError, match="GITHUB_REPOSITORY"):
        client_from_env({"GITHUB_TOKEN": "x"})


def test_action_tells_the_default_token_identity_through_the_environment(github_standin):
    github_standin.add_pull(7)
    old = github_standin.add_comment(7, BOT_LOGIN, "<!-- ci-budget:run -->\nold", user_type="Bot")
    env = {
        "GITHUB_REPOSITORY": github_standin.state.repo,
        "GITHUB_API_URL": github_standin.url,
        "CI_BUDGET_COMMENT_LOGIN": BOT_LOGIN,  # what action.yml sets for github.token
    }
    client = client_from_env(env, token=INSTALLATION_TOKEN, config=Config())
    result = upsert(client, 7, "run", "new")
    assert (result.action, result.comment_id, result.calls) == ("updated", old, 2)
    assert "graphql" not in [c["op"] for c in github_standin.calls()]


def _event(tmp_path, name, mutate=None):
    path = tmp_path / name
    shutil.copy(WEBHOOKS / name, path)
    if mutate:
        data = json.loads(path.read_text())
        mutate(data)
        path.write_text(json.dumps(data))
    return {"GITHUB_EVENT_PATH": str(path), "GITHUB_EVENT_NAME": name.split(".")[0]}


def _pr(env) -> int:
    return Settings(environ=env).pr_number()


def test_pr_number_from_each_event(tmp_path):
    assert _pr(_event(tmp_path, "pull_request.opened.payload.json")) == 2
    assert _pr(_event(tmp_path, "issue_comment.created.on-pull-request.payload.json")) == 1
    with_prs = "workflow_run.completed.with-pull-requests.payload.json"
    expected = json.loads((WEBHOOKS / with_prs).read_text())["workflow_run"]["pull_requests"][0][
        "number"
    ]
    assert _pr(_event(tmp_path, with_prs)) == expected
    with pytest.raises(EventError, match="not a pull request"):
        _pr(_event(tmp_path, "issue_comment.created.payload.json"))
    with pytest.raises(EventError, match="pull_requests is empty"):
        _pr(_event(tmp_path, "workflow_run.completed.payload.json"))
    with pytest.raises(EventError, match="no pull_request, issue or workflow_run"):
        _pr(_event(tmp_path, "workflow_dispatch.payload.json"))
    with pytest.raises(EventError, match="--pr"):
        _pr({})


def test_post_from_event_never_prints_the_token(github_standin, tmp_path, capsys):
    github_standin.add_pull(2)
    env = _event(tmp_path, "pull_request.opened.payload.json")
    env.update(GITHUB_REPOSITORY=github_standin.state.repo, GITHUB_API_URL=github_standin.url,
               GITHUB_TOKEN=INSTALLATION_TOKEN)  # fmt: skip
    sink = Sink(Settings(environ=env, config=Config()))
    for body in ("## budget\nall fine", "## budget\nstill fine"):
        sink.post(body, kind="run", pr=None, what="the comment", where="in a file")
    out = capsys.readouterr()
    [comment] = github_standin.comments(2)
    assert f"created the run comment {comment.id} on {github_standin.state.repo}#2" in out.out
    assert f"updated the run comment {comment.id} on {github_standin.state.repo}#2" in out.out
    assert INSTALLATION_TOKEN not in out.out + out.err
    assert comment.body == "<!-- ci-budget:run -->\n## budget\nstill fine"
    assert comment.login == BOT_LOGIN
    env["GITHUB_API_URL"] = "http://127.0.0.1:9"  # nothing listens: the failure masks the token
    with pytest.raises(AppError, match=r"posting the comment failed: .*\(in a file\)") as err:
        Sink(Settings(environ=env, config=Config())).post(
            "x", kind="run", pr=2, what="the comment", where="in a file"
        )
    assert INSTALLATION_TOKEN not in str(err.value)
