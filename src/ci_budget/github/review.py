"""A file at a commit (`repos/get-content`) and a review comment on lines of a pull request
(`pulls/create-review-comment`), through the client's retry budget (edge)."""

from __future__ import annotations

import base64
from urllib.parse import quote

from ci_budget.github.client import GitHubClient
from ci_budget.github.retry import GitHubError


def file_text(client: GitHubClient, path: str, ref: str) -> str:
    """The text of `path` at `ref`."""
    url = f"{client.api_url}/repos/{client.repo_name}/contents/{quote(path)}"

    def fetch():
        _, data = client.requester.requestJsonAndCheck("GET", url, parameters={"ref": ref})
        return data

    data = client._call(f"{path} at {ref[:12]}", fetch)
    if not isinstance(data, dict) or data.get("type") != "file" or "content" not in data:
        raise GitHubError(f"{path} at {ref[:12]}: not a file")
    return base64.b64decode(data["content"]).decode("utf-8")


def review_comment(client: GitHubClient, number: int, commit: str, path: str,
                   start: int, end: int, body: str) -> int:  # fmt: skip
    """A comment on lines start..end (new side) of `path` in pull request `number`; its id.
    GitHub answers 422 when the lines are not part of the pull request's diff."""
    url = f"{client.api_url}/repos/{client.repo_name}/pulls/{number}/comments"
    payload = {"body": body, "commit_id": commit, "path": path, "line": end, "side": "RIGHT"}
    if start < end:
        payload |= {"start_line": start, "start_side": "RIGHT"}

    def send():
        _, data = client.requester.requestJsonAndCheck("POST", url, input=payload)
        return data

    data = client._call(f"review comment on {path}:{start}-{end}", send, write=True)
    return int(data["id"])
