"""Static budget report: a real git repo (base and head commits) and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import git
from helpers.cli import cli

from ci_budget.budget.diff import Change, StaticReport, build_static
from ci_budget.config import Config
from ci_budget.history.model import History
from ci_budget.models import FileResult, RegistryScan, RunMeta, RunResults
from ci_budget.render.diff_md import LIMIT, MARKER, markdown
from ci_budget.workspace.files import save_history
from ci_budget.workspace.git import (
    GitError,
    glob_dirs,
    glob_match,
    list_files,
    read_blobs,
    resolve,
    selected,
)

MAIN = '\n\nif __name__ == "__main__":\n    main()\n'
CONFIG = "[stage-timeouts]\nbase-b = 20\n"


def _reg(est, stage="base-b", runner="1-gpu-large", extra="") -> str:
    return (
        f'register_cuda_ci(est_time={est}, stage="{stage}", runner_config="{runner}"{extra})' + MAIN
    )


def _write(repo: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _repo(tmp_path: Path, base: dict, head: dict) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _write(repo, {"ci-budget.toml": CONFIG, **base})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    sha = git(repo, "rev-parse", "HEAD")
    _write(repo, head)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    return repo, sha


def _cli(repo: Path, *args: str, env_files: Path | None = None):
    env = {}
    if env_files is not None:
        env = {
            "GITHUB_OUTPUT": str(env_files / "output"),
            "GITHUB_STEP_SUMMARY": str(env_files / "summary"),
        }
    return cli("diff", "--root", str(repo), *args, cwd=repo, env=env)


def _history(path: Path, file: str, suite: str, elapsed: list[float]) -> None:
    history = History()
    for i, seconds in enumerate(elapsed):
        history.add_results(
            RunResults(
                meta=RunMeta(suites=[suite], commit=f"{i:040x}"),
                files=[FileResult(path=file, suite=suite, elapsed=seconds, status="passed")],
            )
        )
    save_history(path, history)


def test_raised_est_time_shows_delta_suite_plan_and_history(tmp_path: Path):
    a, b = "test/registered/test_a.py", "test/registered/test_b.py"
    repo, base = _repo(tmp_path, {a: _reg(600), b: _reg(300)}, {a: _reg(790)})
    store = tmp_path / "history.json"
    suite = "base-b-test-1-gpu-large"
    _history(store, a, suite, [600, 610, 620, 630, 640, 650, 655, 661])
    out = tmp_path / "out" / "budget.md"
    gh = tmp_path / "gh"
    gh.mkdir()
    proc = _cli(
        repo, "--base", base, "--history", str(store), "--out", str(out),
        "--format", "markdown", env_files=gh,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    md = out.read_text(encoding="utf-8")
    assert md == proc.stdout
    assert md.splitlines()[0] == MARKER
    # verdict first: the change leads, the file (shortened) follows
    row = next(line for line in md.splitlines() if "| `test_a.py:1` |" in line)
    # the changed row carries what was measured: p90 661 s over 8 runs, and the new budget's
    # headroom over it: (790 - 661) / 790 = 16 %, no arithmetic left to the reader
    assert row.startswith(
        "| 600s → 790s: **+190s** (+32%) | **16% headroom** over p90 661s (8 runs, "
        "ci-budget history) |"
    )
    assert "+190 GPU·s" in row  # 1-gpu-large: one GPU
    suite_row = next(line for line in md.splitlines() if line.endswith(f"| `{suite}` |"))
    # shards are planned on what CI plans with: a's measured 661 s (not its est_time) + b's
    # 300 s = 961 s over the 0.75 x 20 min = 900 s limit: two shards before and after; the
    # longest is predicted at a's recent time, the p50 of its newest 5 runs (630 .. 661);
    # raising a's est_time changes the budget, not the plan
    assert suite_row.startswith("| ✅ ok | 650s → 650s of 20 min (54%) |")
    assert "| 900s → 1,090s (+190s) | 2 |" in suite_row
    assert "✅ ok" in suite_row and "2 × 1 GPU" in suite_row
    assert (
        "on the measured p90, else est_time; shard wall = Σ each file's recent measured time "
        "(2+ passing runs), else est_time, + the suite's job overhead" in md
    )
    assert "790s budget, p90 measured 661s over the last 8 passing run(s)" in md
    outputs = (gh / "output").read_text()
    assert "budget-risk<<" in outputs and "\nok\n" in outputs
    assert "est-delta<<" in outputs and "\n+190\n" in outputs
    assert (gh / "summary").read_text(encoding="utf-8") == md
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["kind"] == "budget" and data["est_delta"] == 190 and data["base_commit"] == base


def test_every_change_kind_and_introduced_errors(tmp_path: Path):
    t = "test/registered/"
    base = {
        t + "a.py": _reg(600),
        t + "gone.py": _reg(100),
        t + "lost.py": _reg(200),
        t + "moved.py": 'register_cuda_ci(400, "per-commit-2-gpu-large")' + MAIN,
        t + "flaky.py": _reg(50),
        t + "old_error.py": "register_cuda_ci(est_time=X, suite='s')" + MAIN,
        t + "conftest.py": _reg(9999),  # excluded at both sides
    }
    head = {
        t + "gone.py": None,
        t + "lost.py": "def test_x():\n    pass\n",
        t + "moved.py": _reg(400, runner="2-gpu-large"),
        t + "flaky.py": _reg(50, extra=', disabled="flaky on H100"'),
        t + "old_error.py": "\n\nregister_cuda_ci(est_time=X, suite='s')" + MAIN,
        t + "new_error.py": "register_cuda_ci(est_time=Y, suite='s')" + MAIN,
        t + "huge.py": _reg(1500),
    }
    repo, sha = _repo(tmp_path, base, head)
    proc = _cli(repo, "--base", "HEAD~1", "--format", "json", "--out", str(tmp_path / "r.md"))
    assert proc.returncode == 0, proc.stderr
    report = StaticReport.model_validate_json(proc.stdout)
    assert report.base_commit == sha
    kinds = {c.file.rsplit("/", 1)[-1]: c.kinds for c in report.changes}
    assert kinds == {
        "gone.py": ["file-removed"],
        "lost.py": ["unregistered"],
        "moved.py": ["moved"],
        "flaky.py": ["disabled"],
        "huge.py": ["new-file"],
    }
    moved = next(c for c in report.changes if c.file.endswith("moved.py"))
    assert (moved.suite_before, moved.suite_after) == (
        "per-commit-2-gpu-large",
        "base-b-test-2-gpu-large",
    )
    # 2 GPUs on both sides: the move costs nothing; the new 1,500 s file costs 1,500 GPU-s
    assert moved.gpu_seconds_delta == 0
    errors = [(p.file.rsplit("/", 1)[-1], p.line) for p in report.errors_introduced]
    assert errors == [("new_error.py", 1)]  # old_error.py only moved down two lines
    suites = {s.suite: s for s in report.suites}
    big = suites["base-b-test-1-gpu-large"]
    assert big.risk == "over" and big.makespan_after == 1500 and big.timeout_s == 1200
    assert len(big.loads_after) == big.shards_after and max(big.loads_after) == 1500
    assert sum(big.loads_after) == big.est_after and sum(big.loads_before) == big.est_before
    assert report.risk == "over"
    assert suites["per-commit-2-gpu-large"].est_after == 0
    failing = _cli(repo, "--base", "HEAD~1", "--fail-on", "over", "--out", str(tmp_path / "x.md"))
    assert failing.returncode == 1
    md = (tmp_path / "x.md").read_text(encoding="utf-8")
    assert "file removed" in md and "lost its registration" in md and "new_error.py:1" in md
    assert "disabled (flaky on H100)" in md


def test_unknown_base_ref_is_a_clear_error(tmp_path: Path):
    repo, _ = _repo(tmp_path, {"test/registered/a.py": _reg(10)}, {})
    proc = _cli(repo, "--base", "no-such-ref", "--out", str(tmp_path / "r.md"))
    assert proc.returncode == 2
    assert "--base no-such-ref: base ref 'no-such-ref' is not a commit" in proc.stderr
    with pytest.raises(GitError, match="fetch-depth: 0"):
        resolve(repo, "deadbeef")


def test_glob_selection_matches_discover():
    config = Config()
    assert glob_dirs(["test/registered/**/*.py", "x/*/y.py", "*.py"]) == [
        ".",
        "test/registered",
        "x",
    ]
    assert glob_match("test/registered/a.py", "test/registered/**/*.py")
    assert glob_match("test/registered/d/e/a.py", "test/registered/**/*.py")
    assert not glob_match("test/registered/a.txt", "test/registered/**/*.py")
    assert not selected("test/registered/sub/conftest.py", config)
    assert selected("test/registered/sub/test_x.py", config)


def test_markdown_stays_under_the_comment_limit():
    changes = [
        Change(
            file=f"test/registered/{'x' * 80}_{i}.py",
            backend="cuda",
            line=1,
            kinds=["est_time"],
            suite_before="s",
            suite_after="s",
            est_before=100,
            est_after=200,
            gpu_seconds_delta=100,
        )
        for i in range(2000)
    ]
    text = markdown(StaticReport(base_commit="a" * 40, changes=changes, est_delta=200_000))
    assert len(text) <= LIMIT
    assert text.startswith(MARKER + "\n")
    assert "more row(s) not shown" in text
    assert "+200,000s" in text.splitlines()[3]


def test_pure_build_without_changes():
    report = build_static(RegistryScan(), RegistryScan(), set(), set(), Config())
    assert report.changes == [] and report.risk == "ok"
    assert "No registration changes" in markdown(report)


def test_post_upserts_the_budget_comment_on_a_local_github(tmp_path: Path, github_standin):
    from ghstandin import BOT_LOGIN, INSTALLATION_TOKEN

    a = "test/registered/test_a.py"
    repo, base = _repo(tmp_path, {a: _reg(600)}, {a: _reg(790)})
    github_standin.add_pull(7)
    env = {
        "GITHUB_API_URL": github_standin.url,
        "GITHUB_REPOSITORY": github_standin.state.repo,
        "GITHUB_TOKEN": INSTALLATION_TOKEN,
    }
    for _ in range(2):  # the second run edits the same comment
        proc = subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", "diff", "--root", str(repo)]
            + ["--base", base, "--post", "--pr", "7", "--out", str(tmp_path / "b.md")],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")} | env,
            cwd=repo,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert INSTALLATION_TOKEN not in proc.stdout + proc.stderr
    [comment] = [c for c in github_standin.comments(7) if c.login == BOT_LOGIN]
    lines = comment.body.splitlines()
    assert lines[0] == MARKER and MARKER not in lines[1:]
    assert "600s → 790s: **+190s** (+32%)" in comment.body


def test_root_in_a_subfolder_of_the_repository(tmp_path: Path):
    # A project inside a larger checkout (like examples/bitexact here): paths stay root-relative.
    a, b = "proj/test/registered/test_a.py", "proj/test/registered/test_b.py"
    repo, base = _repo(
        tmp_path, {"proj/ci-budget.toml": CONFIG, a: _reg(600), b: _reg(300)}, {a: _reg(700)}
    )
    proc = _cli(repo / "proj", "--base", base, "--format", "json", "--out", str(tmp_path / "o.md"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    changes = [(c["file"], c["kinds"]) for c in report["changes"]]
    assert changes == [("test/registered/test_a.py", ["est_time"])]


def test_terminal_format_is_plain_text_verdict_first(tmp_path: Path):
    a, b = "test/registered/test_a.py", "test/registered/test_b.py"
    repo, base = _repo(tmp_path, {a: _reg(600), b: _reg(300)}, {a: _reg(790)})
    out = tmp_path / "budget.md"
    proc = _cli(repo, "--base", base, "--format", "text", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text != out.read_text(encoding="utf-8")  # the file keeps the markdown
    assert "|" not in text and "**" not in text and "<!--" not in text
    assert text.startswith("OK ci-budget (budget): nothing to act on\n")
    assert text.splitlines()[1].startswith(f"est_time changes vs {base[:12]}: 1 registration")
    change = next(line for line in text.splitlines() if line.endswith(f"{a}:1"))
    assert change.startswith(
        "600s → 790s, +190s (+32%)  not measured (no --history or --partition-model given)  "
        "est_time"
    )
    suite = next(line for line in text.splitlines() if "base-b-test-1-gpu-large" in line)
    assert suite.startswith("ok") and "900s → 790s of 20 min" in suite


def test_incremental_base_scan_equals_a_full_scan_of_both_trees(tmp_path: Path):
    """Only files changed since the base are read from git; the report is exactly what a full
    parse of every base blob and every head file gives."""
    from ci_budget.app.diff import DiffOptions, build
    from ci_budget.app.settings import Settings
    from ci_budget.registry.parse import merge, scan_source

    t = "test/registered/"
    unchanged = {t + f"same/test_{i}.py": _reg(10 * i + 5) for i in range(30)}
    unchanged[t + "same/test_error.py"] = "register_cuda_ci(est_time=X, suite='s')" + MAIN
    unchanged[t + "same/test_plain.py"] = "def test_x():\n    pass\n"
    base = {
        **unchanged,
        t + "raised.py": _reg(600),
        t + "gone.py": _reg(100),
        t + "broken_later.py": _reg(70),
    }
    head = {
        t + "raised.py": _reg(790),
        t + "gone.py": None,
        t + "broken_later.py": "register_cuda_ci(est_time=Z, suite='s')" + MAIN,
        t + "fresh.py": _reg(40, stage="base-a"),
    }
    repo, sha = _repo(tmp_path, base, head)
    _write(repo, {t + "uncommitted.py": _reg(30)})  # the working tree counts, as in CI
    settings = Settings(repo)
    config = settings.config
    incremental = build(settings, DiffOptions(base="HEAD~1"))

    base_files = list_files(repo, sha, config)
    blobs = read_blobs(repo, sha, base_files)
    base_full = merge(scan_source(blobs[rel], rel, config) for rel in base_files)
    head_files = sorted(
        p.relative_to(repo).as_posix() for p in (repo / "test/registered").rglob("*.py")
    )
    head_full = merge(scan_source((repo / rel).read_bytes(), rel, config) for rel in head_files)
    reference = build_static(
        base_full,
        head_full,
        set(base_files),
        set(head_files),
        config,
        base_ref="HEAD~1",
        base_commit=sha,
        history=None,
        arch_rows=[],
        arch_problems=[],
        extra_notes=[],
    )
    assert incremental.model_dump() == reference.model_dump()
    kinds = {c.file.rsplit("/", 1)[-1]: c.kinds for c in incremental.changes}
    assert kinds["raised.py"] == ["est_time"] and kinds["gone.py"] == ["file-removed"]
    assert kinds["uncommitted.py"] == ["new-file"] and kinds["fresh.py"] == ["new-file"]
    assert [p.file.rsplit("/", 1)[-1] for p in incremental.errors_introduced] == ["broken_later.py"]


def test_changed_files_that_are_not_python_are_not_read_as_guard_tables(tmp_path: Path):
    """A PR that edits prose (README.md) has no guard table to check and nothing to report."""
    from ci_budget.app.diff import DiffOptions, build
    from ci_budget.app.settings import Settings

    t = "test/registered/"
    repo, _ = _repo(
        tmp_path,
        {t + "a.py": _reg(10), "README.md": "# Title\n"},
        {"README.md": "# Title\n\nSome prose: it is.\n", t + "a.py": _reg(20)},
    )
    report = build(Settings(repo), DiffOptions(base="HEAD~1"))
    assert report.arch_problems == [] and [c.kinds for c in report.changes] == [["est_time"]]


def test_one_double_star_glob_matches_as_the_general_matcher():
    """The single-`**` shortcut against the general recursive matcher, on every short path."""
    import itertools

    from ci_budget.workspace.git import _match_parts

    patterns = ["a/**/*.py", "**/*.py", "a/**", "**", "a/b/**/c/*.py", "a/*/**/t_*.py", "a/**/b"]
    names = ["a", "b", "c", "x.py", "t_1.py", ".h"]
    for n in range(5):
        for parts in itertools.product(names, repeat=n):
            rel = "/".join(parts)
            for pattern in patterns:
                assert glob_match(rel, pattern) == _match_parts(rel.split("/"), pattern.split("/"))


def test_a_partition_model_sizes_shards_as_sglang_and_a_budget_under_p90_is_named(tmp_path):
    t = "test/registered/"
    files = {t + "a.py": _reg(100), t + "b.py": _reg(100), t + "c.py": _reg(100)}
    repo, base = _repo(tmp_path, files, {t + "c.py": _reg(120)})
    suite = "base-b-test-1-gpu-large"
    model = tmp_path / "model.json"
    model.write_text(json.dumps({
        "est": {suite: {t + "a.py": 700, t + "b.py": 500}},
        "fit": {suite: {"coeff": 1.0, "bias": 60}},
    }))  # fmt: skip
    store = tmp_path / "history.json"
    _history(store, t + "c.py", suite, [140, 150, 160])
    out = tmp_path / "budget.md"
    proc = _cli(
        repo, "--base", base, "--partition-model", str(model), "--history", str(store),
        "--out", str(out), "--format", "markdown",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.with_suffix(".json").read_text())
    [impact] = data["suites"]
    # planned on a 700 (model), b 500 (model), c 160 (history p90): 1,360 s; sglang's rule
    # ceil(1.0 x 1,360 / (0.75 x 20 min - 60 s)) = 2 shards; walls (no job walls in the
    # history: the model's fit) 700 + 60, and 500 + c's recent p50 150 + 60
    assert (impact["shards_before"], impact["shards_after"]) == (2, 2)
    assert impact["loads_after"] == [760.0, 710.0] and (impact["coeff"], impact["bias"]) == (1, 60)
    assert data["predicted_from"] == "model+history"
    [change] = data["changes"]
    assert (change["planned"], change["planned_from"], change["p90"], change["n"]) == (
        160.0, "p90", 160.0, 3,
    )  # fmt: skip
    assert change["under_p90"] and data["under_p90"] == [
        {"file": t + "c.py", "suite": suite, "est_time": 120.0, "p90": 160.0, "n": 3,
         "measured_from": "ci-budget history"}
    ]  # fmt: skip
    md = out.read_text()
    # the verdict's headline names it
    assert "## ⚠️ ci-budget: 1 est_time below the measured p90 (`c.py`: 120s < p90 160s)" in md
    assert "| ⚠️ **33% below** p90 160s (3 runs, ci-budget history) |" in md
    # without the numbers: est_time alone, one shard of 320 s
    plain = _cli(repo, "--base", base, "--out", str(out), "--format", "json")
    [impact] = json.loads(plain.stdout)["suites"]
    assert impact["loads_after"] == [320.0] and json.loads(plain.stdout)["under_p90"] == []
    text = _cli(
        repo, "--base", base, "--partition-model", str(model), "--history", str(store),
        "--format", "text",
    ).stdout.splitlines()  # fmt: skip
    at = text.index("Predicted wall per shard (shard 0 first; from model+history):")
    assert text[at + 2].split() == ["760s,", "710s", suite]
