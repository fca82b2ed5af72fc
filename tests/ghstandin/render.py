"""Response bodies: GitHub's own examples from the OpenAPI description, filled in from state."""

from __future__ import annotations

import base64
from typing import Any

from .spec import example
from .state import Comment, Issue, State


def node_id(kind: str, ident: int) -> str:
    return base64.b64encode(f"0{kind}{ident}".encode()).decode()


def user(base: str, login: str, ident: int, kind: str = "User") -> dict[str, Any]:
    out = example("issue-comment")["user"]
    for key, value in list(out.items()):
        if isinstance(value, str) and "octocat" in value and key != "avatar_url":
            out[key] = value.replace("octocat", login)
    out.update(login=login, id=ident, node_id=node_id("User", ident), type=kind)
    out["url"] = f"{base}/users/{login}"
    return out


def comment(base: str, state: State, c: Comment) -> dict[str, Any]:
    out = example("issue-comment")
    repo_api = f"{base}/repos/{state.repo}"
    out.update(
        id=c.id,
        node_id=node_id("IssueComment", c.id),
        url=f"{repo_api}/issues/comments/{c.id}",
        html_url=f"https://github.com/{state.repo}/pull/{c.issue}#issuecomment-{c.id}",
        body=c.body,
        user=user(base, c.login, c.user_id, c.user_type),
        created_at=c.created_at,
        updated_at=c.updated_at,
        issue_url=f"{repo_api}/issues/{c.issue}",
        author_association="NONE" if c.user_type == "Bot" else "COLLABORATOR",
    )
    return out


def label(base: str, state: State, name: str) -> dict[str, Any]:
    out = example("label-items")[0]
    out.update(
        id=abs(hash(name)) % 10**9,
        name=name,
        url=f"{base}/repos/{state.repo}/labels/{name}",
        default=False,
    )
    return out


def pull(base: str, state: State, issue: Issue) -> dict[str, Any]:
    out = example("pull-request")
    repo_api = f"{base}/repos/{state.repo}"
    owner = state.repo.split("/")[0]
    out.update(
        url=f"{repo_api}/pulls/{issue.number}",
        number=issue.number,
        state=issue.state,
        title=issue.title,
        body=issue.body,
        draft=issue.draft,
        user=user(base, issue.user, 1000 + len(issue.user)),
        labels=[label(base, state, n) for n in issue.labels],
        issue_url=f"{repo_api}/issues/{issue.number}",
        comments_url=f"{repo_api}/issues/{issue.number}/comments",
    )
    head_repo = issue.head_repo or state.repo
    out["head"].update(
        sha=issue.head_sha, ref=issue.head_ref, label=f"{head_repo}:{issue.head_ref}"
    )
    out["head"]["repo"].update(
        full_name=head_repo, name=head_repo.split("/")[1], fork=issue.head_repo is not None
    )
    out["head"]["repo"]["owner"]["login"] = head_repo.split("/")[0]
    if issue.head_pushed_at:
        out["head"]["repo"]["pushed_at"] = issue.head_pushed_at
    out["base"].update(sha=issue.base_sha, ref=issue.base_ref, label=f"{owner}:{issue.base_ref}")
    out["base"]["repo"].update(full_name=state.repo, name=state.repo.split("/")[1], fork=False)
    out["base"]["repo"]["owner"]["login"] = owner
    return out


def issue(base: str, state: State, item: Issue) -> dict[str, Any]:
    out = example("issue")
    repo_api = f"{base}/repos/{state.repo}"
    out.update(
        url=f"{repo_api}/issues/{item.number}",
        number=item.number,
        state=item.state,
        title=item.title,
        body=item.body,
        user=user(base, item.user, 1000 + len(item.user)),
        labels=[label(base, state, n) for n in item.labels],
        draft=item.draft,
        comments=len(state.issue_comments(item.number)),
    )
    if item.pull:
        html = f"https://github.com/{state.repo}/pull/{item.number}"
        out["pull_request"] = {
            "url": f"{repo_api}/pulls/{item.number}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
        }
    else:
        out.pop("pull_request", None)
    return out


def permission(base: str, login: str, role: str) -> dict[str, Any]:
    out = example("repository-collaborator-permission-response-if-user-has-admin-permissions")
    # GitHub folds the fine-grained roles into the classic levels in `permission`
    classic = {"maintain": "write", "triage": "read"}.get(role, role)
    who = {**user(base, login, 2000 + len(login)), "role_name": role}  # the schema requires it
    out.update(permission=classic, role_name=role, user=who)
    return out


def reaction(base: str, rid: int, login: str, ident: int, content: str) -> dict[str, Any]:
    out = example("reaction")
    out.update(
        id=rid, node_id=node_id("Reaction", rid), user=user(base, login, ident), content=content
    )
    return out


def diff_entry(name: str) -> dict[str, Any]:
    out = example("diff-entry-items")[0]
    out.update(filename=name, status="modified")
    return out


def commit(base: str, state: State, sha: str) -> dict[str, Any]:
    out = example("commit-items")[0]
    for key in ("url", "comments_url"):
        out[key] = f"{base}/repos/{state.repo}/commits/{sha}" + (
            "/comments" if key != "url" else ""
        )
    out.update(sha=sha, html_url=f"https://github.com/{state.repo}/commit/{sha}")
    return out


def check_run(base: str, state: State, run: dict[str, Any]) -> dict[str, Any]:
    out = example("check-run")
    out.update({k: v for k, v in run.items() if k in out or k in ("output", "conclusion")})
    out["url"] = f"{base}/repos/{state.repo}/check-runs/{run['id']}"
    return out


def content_file(base: str, state: State, path: str, ref: str, text: str) -> dict[str, Any]:
    import hashlib

    raw = text.encode()
    out = example("content-file-response-if-content-is-a-file")
    sha = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    url = f"{base}/repos/{state.repo}/contents/{path}?ref={ref}"
    out.update(name=path.rsplit("/", 1)[-1], path=path, sha=sha, size=len(raw), url=url,
               encoding="base64", content=base64.encodebytes(raw).decode())  # fmt: skip
    return out


def review_comment(base: str, state: State, issue, comment: dict[str, Any]) -> dict[str, Any]:
    out = example("pull-request-review-comment-example-for-a-multi-line-comment")
    repo_api = f"{base}/repos/{state.repo}"
    out.update(
        id=comment["id"],
        url=f"{repo_api}/pulls/comments/{comment['id']}",
        pull_request_url=f"{repo_api}/pulls/{issue.number}",
        body=comment["body"],
        path=comment["path"],
        commit_id=comment["commit_id"],
        line=comment["line"],
        start_line=comment.get("start_line"),
        side=comment.get("side", "RIGHT"),
        created_at=comment["created_at"],
        updated_at=comment["created_at"],
        user=user(base, comment["login"], 1000 + len(comment["login"])),
    )
    return out
