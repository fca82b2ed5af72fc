"""One function per GitHub operation the stand-in serves, each working on `State`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from . import render
from .spec import example
from .state import NOT_ACCESSIBLE, Identity, Issue, State

DOCS = "https://docs.github.com/rest"


@dataclass
class Req:
    method: str
    path: str
    query: dict[str, list[str]]
    json: Any
    who: Identity
    params: dict[str, str]
    base: str  # http://host:port as the client addressed us
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


@dataclass
class Resp:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None  # a plain-text body instead of JSON


def error(status: int, message: str, **extra: Any) -> Resp:
    return Resp(status, {"message": message, "documentation_url": DOCS, **extra})


def not_found() -> Resp:
    return error(404, "Not Found")


def paginate(req: Req, items: list[Any]) -> Resp:
    """GitHub's page/per_page pagination with a Link header (per_page default 30, max 100)."""
    per_page = min(max(int(req.query.get("per_page", ["30"])[-1]), 1), 100)
    page = max(int(req.query.get("page", ["1"])[-1]), 1)
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page : page * per_page]
    links = []

    def url(n: int) -> str:
        query = {k: v[-1] for k, v in req.query.items()}
        query.update(per_page=str(per_page), page=str(n))
        return f"<{req.base}{req.path}?{urlencode(query)}>"

    if page > 1:
        links += [f'{url(page - 1)}; rel="prev"', f'{url(1)}; rel="first"']
    if page < last:
        links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
    return Resp(200, chunk, {"Link": ", ".join(links)} if links else {})


def _issue(state: State, req: Req, key: str = "issue_number"):
    return state.issues.get(int(req.params[key]))


def list_comments(state: State, req: Req) -> Resp:
    if _issue(state, req) is None:
        return not_found()
    items = [
        render.comment(req.base, state, c)
        for c in state.issue_comments(int(req.params["issue_number"]))
    ]
    return paginate(req, items)


def _too_long(state: State, body: str) -> Resp | None:
    if len(body) <= state.max_body:
        return None
    return error(
        422,
        "Validation Failed",
        errors=[
            {
                "resource": "IssueComment",
                "code": "unprocessable",
                "field": "data",
                "message": f"Body is too long (maximum is {state.max_body} characters)",
            }
        ],
    )


def create_comment(state: State, req: Req) -> Resp:
    issue = _issue(state, req)
    if issue is None:
        return not_found()
    too_long = _too_long(state, req.json["body"])
    if too_long:
        return too_long
    c = state.add_comment(issue.number, req.who, req.json["body"])
    out = render.comment(req.base, state, c)
    return Resp(201, out, {"Location": out["url"]})


def get_comment(state: State, req: Req) -> Resp:
    c = state.comments.get(int(req.params["comment_id"]))
    return not_found() if c is None else Resp(200, render.comment(req.base, state, c))


def update_comment(state: State, req: Req) -> Resp:
    c = state.comments.get(int(req.params["comment_id"]))
    if c is None:
        return not_found()
    too_long = _too_long(state, req.json["body"])
    if too_long:
        return too_long
    c.body = req.json["body"]
    c.updated_at = state.now()
    return Resp(200, render.comment(req.base, state, c))


def delete_comment(state: State, req: Req) -> Resp:
    if state.comments.pop(int(req.params["comment_id"]), None) is None:
        return not_found()
    return Resp(204)


def react(state: State, req: Req) -> Resp:
    c = state.comments.get(int(req.params["comment_id"]))
    if c is None:
        return not_found()
    content = req.json["content"]
    pair = [req.who.login, content]
    existed = pair in c.reactions
    if not existed:
        c.reactions.append(pair)
    rid = c.id * 10 + c.reactions.index(pair)
    return Resp(
        200 if existed else 201, render.reaction(req.base, rid, req.who.login, req.who.id, content)
    )


def permission(state: State, req: Req) -> Resp:
    login = req.params["username"]
    role = state.roles.get(login)
    if role is None:
        if login not in state.users:
            return not_found()
        role = "none"
    return Resp(200, render.permission(req.base, login, role))


def list_labels(state: State, req: Req) -> Resp:
    issue = _issue(state, req)
    if issue is None:
        return not_found()
    return paginate(req, [render.label(req.base, state, n) for n in issue.labels])


def remove_label(state: State, req: Req) -> Resp:
    issue = _issue(state, req)
    if issue is None:
        return not_found()
    if req.params["name"] not in issue.labels:
        return error(404, "Label does not exist")
    issue.labels.remove(req.params["name"])
    return Resp(200, [render.label(req.base, state, n) for n in issue.labels])


def get_pull(state: State, req: Req) -> Resp:
    issue = _issue(state, req, "pull_number")
    if issue is None or not issue.pull:
        return not_found()
    return Resp(200, render.pull(req.base, state, issue))


def list_pulls(state: State, req: Req) -> Resp:
    """GitHub's filters: `state` (open by default), `head` as `owner:branch`, and `base`."""
    want = req.query.get("state", ["open"])[-1]
    head = req.query.get("head", [""])[-1]
    base = req.query.get("base", [""])[-1]
    found = []
    for issue in sorted(state.issues.values(), key=lambda i: -i.number):
        if not issue.pull or (want != "all" and issue.state != want):
            continue
        owner = (issue.head_repo or state.repo).split("/")[0]
        if (head and head != f"{owner}:{issue.head_ref}") or (base and base != issue.base_ref):
            continue
        found.append(render.pull(req.base, state, issue))
    return paginate(req, found)


def list_files(state: State, req: Req) -> Resp:
    issue = _issue(state, req, "pull_number")
    if issue is None or not issue.pull:
        return not_found()
    return paginate(req, [render.diff_entry(f) for f in issue.files])


def list_commits(state: State, req: Req) -> Resp:
    issue = _issue(state, req, "pull_number")
    if issue is None or not issue.pull:
        return not_found()
    shas = issue.commits or [issue.head_sha]
    return paginate(req, [render.commit(req.base, state, sha) for sha in shas[:250]])


def get_issue(state: State, req: Req) -> Resp:
    issue = _issue(state, req)
    if issue is None:
        return not_found()
    return Resp(200, render.issue(req.base, state, issue))


def list_issues(state: State, req: Req) -> Resp:
    """GitHub's filters `state` (open by default) and `labels` (all of them); newest first;
    pull requests are listed too, as GitHub lists them."""
    want = req.query.get("state", ["open"])[-1]
    labels = {x for x in req.query.get("labels", [""])[-1].split(",") if x}
    found = [
        render.issue(req.base, state, issue)
        for issue in sorted(state.issues.values(), key=lambda i: -i.number)
        if (want == "all" or issue.state == want) and labels <= set(issue.labels)
    ]
    return paginate(req, found)


def create_issue(state: State, req: Req) -> Resp:
    body = req.json.get("body") or ""
    too_long = _too_long(state, body)
    if too_long:
        return too_long
    number = max(state.issues, default=0) + 1
    labels = [x if isinstance(x, str) else x["name"] for x in req.json.get("labels", [])]
    state.issues[number] = Issue(number, user=req.who.login, title=str(req.json["title"]),
                                 body=body, labels=labels, pull=False)  # fmt: skip
    out = render.issue(req.base, state, state.issues[number])
    return Resp(201, out, {"Location": out["url"]})


def _edit(state: State, req: Req, issue: Issue) -> Resp | None:
    """PATCH of an issue or a pull request: its body (within GitHub's limit), title, state."""
    if "body" in req.json:
        too_long = _too_long(state, req.json["body"] or "")
        if too_long:
            return too_long
        issue.body = req.json["body"] or ""
    for key in ("title", "state"):
        if key in req.json:
            setattr(issue, key, req.json[key])
    return None


def update_issue(state: State, req: Req) -> Resp:
    issue = _issue(state, req)
    if issue is None:
        return not_found()
    return _edit(state, req, issue) or Resp(200, render.issue(req.base, state, issue))


def create_pull(state: State, req: Req) -> Resp:
    """A pull request from a branch of this repository (`head`: BRANCH or OWNER:BRANCH); GitHub
    refuses a second open one for the same head and base."""
    head = str(req.json["head"]).split(":")[-1]
    base = str(req.json["base"])
    for issue in state.issues.values():
        same = issue.head_repo is None and (issue.head_ref, issue.base_ref) == (head, base)
        if issue.pull and issue.state == "open" and same:
            return error(422, "Validation Failed", errors=[{"resource": "PullRequest",
                         "code": "custom", "message": f"A pull request already exists for {head}."}])  # fmt: skip
    body = req.json.get("body") or ""
    too_long = _too_long(state, body)
    if too_long:
        return too_long
    number = max(state.issues, default=0) + 1
    state.issues[number] = Issue(number, user=req.who.login, title=str(req.json["title"]),
                                 body=body, head_ref=head, base_ref=base)  # fmt: skip
    out = render.pull(req.base, state, state.issues[number])
    return Resp(201, out, {"Location": out["url"]})


def update_pull(state: State, req: Req) -> Resp:
    issue = _issue(state, req, "pull_number")
    if issue is None or not issue.pull:
        return not_found()
    return _edit(state, req, issue) or Resp(200, render.pull(req.base, state, issue))


def create_check_run(state: State, req: Req) -> Resp:
    run = {"id": state.new_id(), "status": "queued", **req.json}
    state.check_runs[run["id"]] = run
    return Resp(201, render.check_run(req.base, state, run))


def update_check_run(state: State, req: Req) -> Resp:
    run = state.check_runs.get(int(req.params["check_run_id"]))
    if run is None:
        return not_found()
    run.update(req.json)
    return Resp(200, render.check_run(req.base, state, run))


def dispatch(state: State, req: Req) -> Resp:
    state.dispatches.append({"path": req.path, **(req.json or {})})
    return Resp(204)


def rate_limit(state: State, req: Req) -> Resp:
    return Resp(200, example("rate-limit-overview"))


def get_user(state: State, req: Req) -> Resp:
    if req.who.installation:
        return error(403, NOT_ACCESSIBLE)
    return Resp(200, render.user(req.base, req.who.login, req.who.id, req.who.type))


def graphql(state: State, req: Req) -> Resp:
    query = req.json.get("query") if isinstance(req.json, dict) else None
    if not isinstance(query, str) or "viewer" not in query or "login" not in query:
        return Resp(400, {"message": "Problems parsing JSON", "documentation_url": DOCS})
    # an installation token's viewer is the app's bot account
    return Resp(200, {"data": {"viewer": {"login": req.who.login}}})


def get_content(state: State, req: Req) -> Resp:
    """A file's text at a ref (the default branch when none is given), base64 as GitHub sends."""
    ref = req.query.get("ref", ["main"])[-1]
    text = state.contents.get((ref, req.params["path"]))
    if text is None:
        return not_found()
    return Resp(200, render.content_file(req.base, state, req.params["path"], ref, text))


def create_review_comment(state: State, req: Req) -> Resp:
    """A review comment on lines of the PR's diff at its head commit; GitHub answers 422 for
    lines outside the diff."""
    issue = _issue(state, req, "pull_number")
    if issue is None or not issue.pull:
        return not_found()
    body = req.json
    start, line = body.get("start_line", body.get("line")), body.get("line")
    if line is None or body.get("commit_id") != issue.head_sha:
        return error(422, "Validation Failed", errors=[{"resource": "PullRequestReviewComment",
                     "code": "invalid", "field": "commit_id"}])  # fmt: skip
    hunks = issue.hunks.get(body.get("path"), [])
    if not any(lo <= start and line <= hi for lo, hi in hunks):
        return error(422, "Validation Failed", errors=[{"resource": "PullRequestReviewComment",
                     "code": "custom", "field": "pull_request_review_thread.line",
                     "message": "could not be resolved"}])  # fmt: skip
    comment = {"id": state.new_id(), "login": req.who.login, "created_at": state.now(), **body}
    state.review_comments.append(comment)
    return Resp(201, render.review_comment(req.base, state, issue, comment))


OPERATIONS = {
    "issues/list-comments": list_comments,
    "issues/create-comment": create_comment,
    "issues/get-comment": get_comment,
    "issues/update-comment": update_comment,
    "issues/delete-comment": delete_comment,
    "reactions/create-for-issue-comment": react,
    "repos/get-collaborator-permission-level": permission,
    "issues/list-labels-on-issue": list_labels,
    "issues/remove-label": remove_label,
    "pulls/get": get_pull,
    "pulls/list": list_pulls,
    "pulls/list-files": list_files,
    "pulls/list-commits": list_commits,
    "issues/get": get_issue,
    "issues/list-for-repo": list_issues,
    "issues/create": create_issue,
    "issues/update": update_issue,
    "pulls/create": create_pull,
    "pulls/update": update_pull,
    "repos/get-content": get_content,
    "pulls/create-review-comment": create_review_comment,
    "checks/create": create_check_run,
    "checks/update": update_check_run,
    "actions/create-workflow-dispatch": dispatch,
    "repos/create-dispatch-event": dispatch,
    "rate-limit/get": rate_limit,
}

# Served outside the OpenAPI subset, each with its own small check.
EXTRA = {
    ("GET", "/user"): ("users/get-authenticated", get_user),
    ("POST", "/graphql"): ("graphql", graphql),
}
