"""The GitHub stand-in itself: request validation, response shapes, pagination, identities,
faults, and the standalone process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN, PAT_TOKEN, READONLY_TOKEN, StandIn, validate
from ghstandin.spec import SERVER, _openapi

ROOT = Path(__file__).resolve().parents[2]
AUTH = {"Authorization": f"token {INSTALLATION_TOKEN}"}


def test_validator_rejects_what_github_rejects():
    path = "/repos/o/r/issues/3/comments"
    assert validate("POST", path, {}, b'{"body": "ok"}', "application/json") is None
    assert "'body' is a required property" in validate("POST", path, {}, b"{}", "application/json")
    assert "not of type 'string'" in validate("POST", path, {}, b'{"body": 5}', "application/json")
    assert validate("GET", "/repos/o/r/issues/x/comments", {}, b"", None)  # not an integer
    reaction = "/repos/o/r/issues/comments/1/reactions"
    assert "is not one of" in validate(
        "POST", reaction, {}, b'{"content": "party"}', "application/json"
    )
    assert validate("DELETE", "/repos/o/r/pulls/1", {}, b"", None)  # no such operation


def test_invalid_requests_are_answered_4xx_and_recorded():
    with StandIn() as standin:
        standin.add_pull(3)
        base = f"{standin.url}/repos/{standin.state.repo}"
        missing = requests.post(f"{base}/issues/3/comments", json={"text": "x"}, headers=AUTH)
        unknown = requests.get(f"{base}/branches", headers=AUTH)
        assert (missing.status_code, unknown.status_code) == (422, 404)
        assert len(standin.invalid) == 2 and "'body' is a required property" in standin.invalid[0]
        assert standin.comments(3) == []


def test_responses_match_githubs_schemas(github_standin):
    from openapi_core.testing import MockRequest, MockResponse

    github_standin.add_pull(3)
    github_standin.state.roles["alice"] = "maintain"
    repo = f"/repos/{github_standin.state.repo}"
    created = requests.post(
        f"{github_standin.url}{repo}/issues/3/comments", json={"body": "x"}, headers=AUTH
    )
    cid = created.json()["id"]
    cases = [
        ("post", f"{repo}/issues/3/comments", b'{"body": "x"}', created),
        ("get", f"{repo}/issues/3/comments", b"", None),
        ("patch", f"{repo}/issues/comments/{cid}", b'{"body": "y"}', None),
        ("post", f"{repo}/issues/comments/{cid}/reactions", b'{"content": "eyes"}', None),
        ("get", f"{repo}/collaborators/alice/permission", b"", None),
    ]
    for method, path, data, resp in cases:
        if resp is None:
            resp = requests.request(method, f"{github_standin.url}{path}", data=data or None,
                                    headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
        assert resp.status_code in (200, 201), (path, resp.text)
        request = MockRequest(
            SERVER, method, path, data=data or None, content_type="application/json"
        )
        response = MockResponse(
            resp.content, status_code=resp.status_code, content_type="application/json"
        )
        _openapi().validate_response(request, response)  # raises on a shape GitHub would not send
    assert (
        requests.get(
            f"{github_standin.url}{repo}/collaborators/alice/permission", headers=AUTH
        ).json()["permission"]
        == "write"
    )


def test_pagination_links(github_standin):
    github_standin.add_pull(3)
    for i in range(75):
        github_standin.add_comment(3, "alice", f"c{i}")
    url = f"{github_standin.url}/repos/{github_standin.state.repo}/issues/3/comments"
    first = requests.get(url, headers=AUTH)
    assert len(first.json()) == 30  # GitHub's default page size
    assert first.links["next"]["url"].endswith("per_page=30&page=2")
    assert first.links["last"]["url"].endswith("page=3")
    last = requests.get(first.links["last"]["url"], headers=AUTH)
    assert [c["body"] for c in last.json()] == [f"c{i}" for i in range(60, 75)]
    assert "next" not in last.links and "prev" in last.links
    capped = requests.get(url, params={"per_page": 500}, headers=AUTH)
    assert len(capped.json()) == 75 and "Link" not in capped.headers


def test_identities(github_standin):
    github_standin.add_pull(3)
    user = f"{github_standin.url}/user"
    bot = requests.get(user, headers=AUTH)
    assert (
        bot.status_code == 403 and bot.json()["message"] == "Resource not accessible by integration"
    )
    assert (
        requests.get(user, headers={"Authorization": f"token {PAT_TOKEN}"}).json()["login"]
        == "ci-maintainer"
    )
    viewer = requests.post(
        f"{github_standin.url}/graphql", json={"query": "query { viewer { login } }"}, headers=AUTH
    )
    assert viewer.json() == {"data": {"viewer": {"login": BOT_LOGIN}}}
    comments = f"{github_standin.url}/repos/{github_standin.state.repo}/issues/3/comments"
    made = requests.post(comments, json={"body": "x"}, headers=AUTH).json()
    assert (made["user"]["login"], made["user"]["type"]) == (BOT_LOGIN, "Bot")
    ro = requests.post(
        comments, json={"body": "x"}, headers={"Authorization": f"token {READONLY_TOKEN}"}
    )
    assert (
        ro.status_code == 403 and ro.json()["message"] == "Resource not accessible by integration"
    )
    assert requests.get(comments, headers={"Authorization": "token nope"}).status_code == 401
    assert requests.get(comments).status_code == 401
    assert len(github_standin.comments(3)) == 1


def test_fault_queue_is_per_operation_and_in_order(github_standin):
    github_standin.add_pull(3)
    github_standin.fail("pulls/get", 500)
    github_standin.too_many_requests("pulls/get", retry_after=2)
    url = f"{github_standin.url}/repos/{github_standin.state.repo}/pulls/3"
    got = [requests.get(url, headers=AUTH) for _ in range(3)]
    assert [r.status_code for r in got] == [500, 429, 200]
    assert got[1].headers["Retry-After"] == "2"
    assert [c["status"] for c in github_standin.calls("pulls/get")] == [500, 429, 200]


def test_standalone_process_serves_and_dumps_state(tmp_path):
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps({"repo": "acme/widgets", "issues": [{"number": 12}], "roles": {"eve": "triage"}})
    )
    dump = tmp_path / "state.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.ghstandin", "--port", "0", "--state", str(seed), "--dump", str(dump)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        made = requests.post(
            f"{url}/repos/acme/widgets/issues/12/comments", json={"body": "hi"}, headers=AUTH
        )
        assert made.status_code == 201
        live = requests.get(f"{url}/_standin/state").json()
        assert live["call_count"] == 1 and live["comments"][0]["body"] == "hi"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    final = json.loads(dump.read_text())
    assert final["repo"] == "acme/widgets" and final["invalid"] == []
    assert [c["op"] for c in final["calls"]] == ["issues/create-comment"]


@pytest.mark.parametrize("token", [INSTALLATION_TOKEN])
def test_admin_fault_endpoint(github_standin, token):
    github_standin.add_pull(3)
    assert (
        requests.post(
            f"{github_standin.url}/_standin/fault", json={"op": "pulls/get", "status": 502}
        ).status_code
        == 204
    )
    url = f"{github_standin.url}/repos/{github_standin.state.repo}/pulls/3"
    assert requests.get(url, headers={"Authorization": f"token {token}"}).status_code == 502


def test_the_openapi_subset_is_a_valid_description():
    """The stand-in skips re-validating the description in every process; this checks it once."""
    from ghstandin.spec import spec_dict
    from openapi_core import OpenAPI

    OpenAPI.from_dict(spec_dict())  # raises on an invalid OpenAPI description
