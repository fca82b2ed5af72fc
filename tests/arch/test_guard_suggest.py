"""`guard suggest`: the /verify-guard answer posted through the local GitHub stand-in (which
checks every request against GitHub's description): a review suggestion on the table's lines,
refilled from the file at the pinned commit; a plain comment where GitHub refuses one."""

from __future__ import annotations

from pathlib import Path

import pytest
from ghstandin import INSTALLATION_TOKEN
from gitrepo import git

from ci_budget.app.guard_suggest import GuardSuggestOptions, suggest_bodies
from ci_budget.app.settings import AppError, Settings
from ci_budget.config import Config
from ci_budget.github.client import GitHubClient
from ci_budget.models import GuardVerification

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bitexact"
GUARD = "test/registered/radix_cache/test_hybrid_cache_kl_bitexact.py"
STORED = EXAMPLE / "results" / "guard-verify-34184.verification.json"
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"


# The project is a folder of its repository, as the example is: GitHub names files from the top.
PROJECT = "examples/bitexact"
PATH = f"{PROJECT}/{GUARD}"


def setup(standin, tmp_path, hunks, **changes):
    text = (EXAMPLE / GUARD).read_text()
    root = tmp_path / "repo" / PROJECT
    (root / GUARD).parent.mkdir(parents=True)
    (root / GUARD).write_text(text)
    git(tmp_path / "repo", "init", "-q")
    standin.state.contents[(SHA, PATH)] = text
    standin.add_pull(7, head_sha=SHA, files=[PATH], hunks={PATH: hunks})
    saved = GuardVerification.model_validate_json(STORED.read_text())
    saved = saved.model_copy(update={"commit": SHA, **changes})
    path = tmp_path / "verification.json"
    path.write_text(saved.model_dump_json())
    client = GitHubClient(standin.state.repo, INSTALLATION_TOKEN, standin.url, sleep=lambda s: 0)
    settings = Settings(root, config=Config(), environ={})
    return text, path, client, settings


def test_the_filled_table_is_a_suggestion_on_its_docstring_lines(github_standin, tmp_path):
    text, path, client, settings = setup(github_standin, tmp_path, [(1, 40)])
    [body] = suggest_bodies(settings, GuardSuggestOptions(path, 7, SHA), client)
    [posted] = github_standin.state.review_comments
    assert posted["commit_id"] == SHA and posted["path"] == PATH and posted["side"] == "RIGHT"
    first, last = posted["start_line"], posted["line"]
    old = text.split("\n")[first - 1 : last]
    assert "fix reverted" in old[0] and "#29792" in old[-1]  # the table, header to last row
    suggested = body.split("```suggestion\n", 1)[1].split("\n```", 1)[0].split("\n")
    assert len(suggested) == len(old)
    lazy = [ln for ln in suggested if "lazy test_prefill_cache_hit" in ln][0]
    assert "4.71e-03" in lazy and "n/a" not in lazy
    changed = [(a, b) for a, b in zip(old, suggested, strict=True) if a != b]
    assert len(changed) == 1  # SM90 and fixed were as measured elsewhere; only the n/a moves
    assert "silent on CI arch" in body and posted["body"] == body


def test_outside_the_diff_the_table_goes_into_a_comment(github_standin, tmp_path):
    _, path, client, settings = setup(github_standin, tmp_path, [])
    [body] = suggest_bodies(settings, GuardSuggestOptions(path, 7, SHA), client)
    assert github_standin.state.review_comments == []
    [comment] = github_standin.comments(7)
    assert comment.body == body and "```text" in body and "4.71e-03" in body


def test_a_verification_of_another_commit_posts_nothing(github_standin, tmp_path):
    _, path, client, settings = setup(github_standin, tmp_path, [(1, 40)], commit="f" * 40)
    with pytest.raises(AppError, match="not at the pinned"):
        suggest_bodies(settings, GuardSuggestOptions(path, 7, SHA), client)
    assert github_standin.state.review_comments == [] and github_standin.comments(7) == []


def test_text_from_the_gpu_job_stays_inert(github_standin, tmp_path):
    _, path, client, settings = setup(github_standin, tmp_path, [(1, 40)],
                                      reverted=["@maintainers <!-- ci-budget:run -->"])  # fmt: skip
    [body] = suggest_bodies(settings, GuardSuggestOptions(path, 7, SHA), client)
    assert "`@maintainers <\u200b!-- ci-budget:run -->`" in body  # a code span: no mention
    assert "<!-- ci-budget" not in body  # no forged sticky-comment marker


def test_the_printed_answer_is_no_workflow_command_in_the_report_jobs_log(
    github_standin, tmp_path, monkeypatch, capsys
):
    from ci_budget.cli import main
    from tests.github.test_actions import runner_commands

    evil = "x ##[error]PWN \u202e\n::error::PWN"
    _, path, _, _ = setup(github_standin, tmp_path, [(1, 40)], reverted=[evil])
    monkeypatch.setenv("GITHUB_REPOSITORY", github_standin.state.repo)
    monkeypatch.setenv("GITHUB_TOKEN", INSTALLATION_TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", github_standin.url)
    root = tmp_path / "repo" / PROJECT
    argv = ["guard", "suggest", "--root", str(root), "--verification", str(path), "--pr", "7"]
    assert main([*argv, "--sha", SHA, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "##[error]PWN" in printed.replace("\u200b", "") and "<U+202E>" in printed
    assert runner_commands(printed) == []
    # A refusal quoting the job's text is one line too.
    path.write_text(path.read_text().replace('"sm90"', '"sm90\\n::error::PWN"'))
    assert main([*argv, "--sha", SHA, "--dry-run"]) != 0
    captured = capsys.readouterr()
    assert "::error::PWN" in captured.err and runner_commands(captured.err) == []
