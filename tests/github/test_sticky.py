"""Sticky PR comments against the stand-in: find by marker + author, update, recreate, dedupe."""

from __future__ import annotations

import threading
import time

import pytest
from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN

from ci_budget.github.client import GitHubClient
from ci_budget.github.sticky import upsert
from ci_budget.render.blocks import fit, with_marker

MARK = "<!-- ci-budget:run -->"


def make(standin, **kw):
    kw.setdefault("comment_login", BOT_LOGIN)
    kw.setdefault("sleep", lambda s: None)
    return GitHubClient(standin.state.repo, INSTALLATION_TOKEN, standin.url, **kw)


def bodies(standin, number):
    return [(c.login, c.body) for c in standin.comments(number)]


def test_create_update_deleted_recreate(github_standin):
    github_standin.add_pull(7)
    client = make(github_standin)
    created = upsert(client, 7, "run", "v1")
    assert (created.action, created.calls) == ("created", 3)  # list + create + list
    updated = upsert(client, 7, "run", "v2")
    assert (updated.action, updated.calls, updated.comment_id) == ("updated", 2, created.comment_id)
    unchanged = upsert(client, 7, "run", "v2")
    assert (unchanged.action, unchanged.calls) == ("unchanged", 1)
    # someone deletes the comment after our list and before our edit: GitHub answers 404
    github_standin.after("issues/list-comments", lambda st: st.comments.pop(created.comment_id))
    again = upsert(client, 7, "run", "v3")
    assert again.action == "created" and again.comment_id != created.comment_id
    assert again.calls == 4  # list + edit (404) + create + list
    assert bodies(github_standin, 7) == [(BOT_LOGIN, f"{MARK}\nv3")]


def test_without_create_an_existing_comment_is_updated_and_none_is_made(github_standin):
    github_standin.add_pull(7)
    client = make(github_standin)
    skipped = upsert(client, 7, "run", "v1", create=False)
    assert (skipped.action, skipped.calls, skipped.comment_id) == ("not created", 1, 0)
    assert bodies(github_standin, 7) == []
    created = upsert(client, 7, "run", "v1")
    fixed = upsert(client, 7, "run", "fixed", create=False)  # so "fixed" shows
    assert (fixed.action, fixed.comment_id) == ("updated", created.comment_id)
    assert bodies(github_standin, 7) == [(BOT_LOGIN, f"{MARK}\nfixed")]


def test_marker_on_someone_elses_comment_is_left_alone(github_standin):
    github_standin.add_pull(7)
    forged = github_standin.add_comment(7, "mallory", f"{MARK}\nnot yours")
    github_standin.add_comment(7, "alice", f"quoting:\n{MARK}")
    client = make(github_standin)
    result = upsert(client, 7, "run", "ours")
    assert result.action == "created" and result.comment_id != forged
    assert bodies(github_standin, 7) == [
        ("mallory", f"{MARK}\nnot yours"),
        ("alice", f"quoting:\n{MARK}"),
        (BOT_LOGIN, f"{MARK}\nours"),
    ]


def test_kinds_are_separate(github_standin):
    github_standin.add_pull(7)
    client = make(github_standin)
    a = upsert(client, 7, "run", "runs")
    b = upsert(client, 7, "static", "static")
    assert a.comment_id != b.comment_id and len(github_standin.comments(7)) == 2


def test_250_comments_found_across_pages(github_standin):
    github_standin.add_pull(7)
    for i in range(120):
        github_standin.add_comment(7, "alice", f"chatter {i}")
    ours = github_standin.add_comment(7, BOT_LOGIN, f"{MARK}\nold", user_type="Bot")
    for i in range(129):
        github_standin.add_comment(7, "bob", f"more chatter {i}")
    client = make(github_standin)
    result = upsert(client, 7, "run", "new")
    assert (result.action, result.comment_id) == ("updated", ours)
    lists = github_standin.calls("issues/list-comments")
    assert len(lists) == 3  # 250 comments at 100 per page
    assert result.calls == 4 == client.calls == len(github_standin.calls())
    assert github_standin.comments(7)[120].body == f"{MARK}\nnew"


def test_update_with_known_identity_costs_two_calls(github_standin):
    github_standin.add_pull(7)
    for i in range(99):
        github_standin.add_comment(7, "alice", f"chatter {i}")
    github_standin.add_comment(7, BOT_LOGIN, f"{MARK}\nold", user_type="Bot")
    client = make(github_standin)
    assert upsert(client, 7, "run", "new").calls == 2
    assert [c["op"] for c in github_standin.calls()] == [
        "issues/list-comments",
        "issues/update-comment",
    ]


def test_installation_identity_finds_our_comment_without_user(github_standin):
    github_standin.add_pull(7)
    old = github_standin.add_comment(7, BOT_LOGIN, f"{MARK}\nold", user_type="Bot")
    client = GitHubClient(github_standin.state.repo, INSTALLATION_TOKEN, github_standin.url)
    result = upsert(client, 7, "run", "new")
    assert (result.action, result.comment_id, result.calls) == ("updated", old, 3)  # +graphql
    assert "users/get-authenticated" not in [c["op"] for c in github_standin.calls()]


def test_duplicates_are_merged_into_the_oldest(github_standin):
    github_standin.add_pull(7)
    first = github_standin.add_comment(7, BOT_LOGIN, f"{MARK}\na", user_type="Bot")
    github_standin.add_comment(7, BOT_LOGIN, f"{MARK}\nb", user_type="Bot")
    result = upsert(make(github_standin), 7, "run", "c")
    assert result.comment_id == first
    assert bodies(github_standin, 7) == [(BOT_LOGIN, f"{MARK}\nc")]


def _race(standin, count):
    barrier = threading.Barrier(count)
    errors = []

    def report(i):
        # real sleeps: only the collision back-off sleeps here
        client = make(standin, sleep=time.sleep)
        barrier.wait()
        try:
            upsert(client, 7, "run", f"shard {i} took {i * 10} s")
        except Exception as exc:  # collected: an exception in a thread would be lost
            errors.append(exc)

    threads = [threading.Thread(target=report, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_ten_concurrent_reporters_leave_one_comment(github_standin):
    github_standin.add_pull(7)
    _race(github_standin, 10)
    [comment] = github_standin.comments(7)
    assert comment.body.startswith(f"{MARK}\nshard ")


def test_too_long_for_github_is_cut_and_retried_once(github_standin):
    github_standin.add_pull(7)
    github_standin.state.max_body = 1000
    client = make(github_standin)
    result = upsert(client, 7, "run", "x" * 5000)
    [comment] = github_standin.comments(7)
    assert len(comment.body) <= 1000 and "1000-character comment limit" in comment.body
    assert comment.body.startswith(f"{MARK}\nxxx")
    statuses = [(c["op"], c["status"]) for c in github_standin.calls()]
    assert statuses == [
        ("issues/list-comments", 200),
        ("issues/create-comment", 422),
        ("issues/create-comment", 201),
        ("issues/list-comments", 200),
    ]
    assert result.calls == 4


def test_body_is_cut_to_githubs_limit_before_sending(github_standin):
    github_standin.add_pull(7)
    upsert(make(github_standin), 7, "run", "y" * 70000)
    [comment] = github_standin.comments(7)
    assert len(comment.body) == 65536 and comment.body.endswith("results artifact)_\n")


def test_the_marker_goes_first_once():
    assert with_marker("run", "body") == f"{MARK}\nbody"
    assert with_marker("run", f"{MARK}\nbody") == f"{MARK}\nbody"


def test_fit_and_bad_names():
    assert fit("short", 10) == "short"
    cut = fit("z" * 500, 200)
    assert len(cut) == 200 and "200-character" in cut
    with pytest.raises(ValueError, match="kind"):
        with_marker("bad kind", "x")


def test_comment_vanishing_right_after_create_is_listed_again_not_an_error(github_standin):
    # A racing reporter deletes ours as its duplicate just after we create it (and its own
    # comment is gone too): we list again, then create again, and end with exactly one.
    github_standin.add_pull(7)
    client = make(github_standin)

    def racing_reporter_deletes(state):
        state.comments.pop(max(state.comments))

    github_standin.after("issues/create-comment", racing_reporter_deletes)
    result = upsert(client, 7, "run", "body")
    assert result.action == "created"
    assert bodies(github_standin, 7) == [(BOT_LOGIN, f"{MARK}\nbody")]
    assert [c["op"] for c in github_standin.calls()].count("issues/create-comment") == 2


WATCH = "<!-- ci-budget:watch -->"


def test_the_tracking_issue_is_opened_once_then_edited_in_place(github_standin):
    from ghstandin.state import Issue

    from ci_budget.github.sticky import upsert_issue

    state = github_standin.state
    state.issues[3] = Issue(3, user="mallory", title="forged", body=f"{WATCH}\nnot ours",
                            labels=["ci-budget-watch"], pull=False)  # fmt: skip
    state.issues[4] = Issue(4, labels=["ci-budget-watch"])  # a pull request with the label
    client = make(github_standin)
    number, action = upsert_issue(client, "watch", "ci-budget-watch", WATCH, f"{WATCH}\nv1")
    assert action == "created" and number == 5
    assert (state.issues[5].user, state.issues[5].labels) == (BOT_LOGIN, ["ci-budget-watch"])
    again, action = upsert_issue(client, "watch", "ci-budget-watch", WATCH, f"{WATCH}\nv2")
    assert (again, action, state.issues[5].body) == (5, "updated", f"{WATCH}\nv2")
    same = upsert_issue(client, "watch", "ci-budget-watch", WATCH, f"{WATCH}\nv2")
    assert same == (5, "unchanged")
    assert state.issues[3].body == f"{WATCH}\nnot ours" and len(state.issues) == 3


def test_the_est_time_pull_request_is_opened_once_then_edited(github_standin):
    from ci_budget.github.sticky import upsert_pull

    state = github_standin.state
    # a fork's branch of the same name: not ours
    github_standin.add_pull(2, head_ref="ci-budget/est-time", head_repo="mallory/hello-gpu")
    client = make(github_standin)
    number, action = upsert_pull(client, "ci-budget/est-time", "main", "est_time", "v1")
    assert action == "created" and state.issues[number].head_ref == "ci-budget/est-time"
    assert (state.issues[number].user, state.issues[number].body) == (BOT_LOGIN, "v1")
    again = upsert_pull(client, "ci-budget/est-time", "main", "est_time", "v2")
    assert again == (number, "updated") and state.issues[number].body == "v2"
    assert upsert_pull(client, "ci-budget/est-time", "main", "est_time", "v2") == (
        number, "unchanged",
    )  # fmt: skip
    assert sum(i.pull for i in state.issues.values()) == 2
