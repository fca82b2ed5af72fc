"""One verdict: the headline names the worst thing this PR must act on; what was already true
at the base is context. Pure cases, then the static report of real PR shapes through the CLI."""

from __future__ import annotations

from pathlib import Path

from gitrepo import git
from helpers.registry import reg

from ci_budget.budget.diff import Change, HistoryNote, StaticReport, UnderBudget
from ci_budget.budget.impact import SuiteImpact, pr_risk
from ci_budget.budget.status import build_report
from ci_budget.budget.verdict import below_p90, run_news, run_verdict, static_news, static_verdict
from ci_budget.config import Config
from ci_budget.history.model import Stats
from ci_budget.models import ArchCell, ArchRow, FileResult, Problem, RunResults
from ci_budget.render.escape import code, md, plain
from ci_budget.render.words import Words, context, headline
from tests.budget.test_static import _cli, _history, _reg

SUITE = "base-b-test-1-gpu-large"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sglang_pr"
GUARD = (
    "test/registered/radix_cache/unified_radix_tree/test_unified_radix_cache_kl_hybrid_bitexact.py"
)
WORDS = Words(name=code, text=md)


def _suite(before: float, after: float, risk: str, **kw) -> SuiteImpact:
    return SuiteImpact(
        suite=kw.pop("suite", "base-c-test-4-gpu-gb300"), backend="cuda", files_before=7,
        files_after=6, makespan_before=before, makespan_after=after, timeout_s=1800, risk=risk,
        **kw,
    )  # fmt: skip


def _row(case: str, sm90: ArchCell, flags: list[str], line: int = 20) -> ArchRow:
    return ArchRow(
        file=GUARD, line=line, group="#34184", case=case, ci_arch="sm90", flags=flags,
        reverted={"sm100": ArchCell(raw="5.56e-06", values=[5.56e-06]), "sm90": sm90},
    )  # fmt: skip


def test_a_suite_already_near_its_timeout_and_not_made_worse_is_context():
    unchanged = _suite(1800, 1800, "near")
    assert pr_risk(unchanged) == "ok"
    v = static_verdict(StaticReport(suites=[unchanged]))
    assert v.level == "ok" and v.findings == []
    assert headline(v, WORDS, "ci-budget") == "✅ ci-budget: nothing to act on"
    assert context(v, WORDS) == (
        "Not this PR's doing: `base-c-test-4-gpu-gb300` was already near its stage timeout "
        "(1,800s of 30 min) and is not made worse."
    )


def test_a_suite_the_pr_lengthens_into_risk_is_the_verdict():
    near = _suite(1300, 1500, "near", suite="base-b-test-2-gpu-large")
    over = _suite(1700, 1900, "over")
    new = _suite(0, 1600, "near", suite="base-c-new")
    new.files_before = 0
    assert [pr_risk(s) for s in (near, over, new)] == ["near", "over", "near"]
    v = static_verdict(StaticReport(suites=[near, over, new]))
    assert v.level == "fail"
    assert [f.kind for f in v.findings] == ["stage-over", "stage-near"]
    assert headline(v, WORDS, "ci-budget") == (
        "🛑 ci-budget: `base-c-test-4-gpu-gb300` over its stage timeout (1,900s of 30 min); "
        "`base-c-new`, `base-b-test-2-gpu-large` near their stage timeout "
        "(1,600s of 30 min; 1,500s of 30 min)"
    )


def test_a_new_est_time_below_the_measured_p90_is_a_warning():
    stats = Stats(file="t/a.py", suite=SUITE, runs=8, n=8, p50=600, p90=840, max=900)
    low = HistoryNote(file="t/a.py", suite=SUITE, est_time=790, stats=stats)
    enough = HistoryNote(file="t/b.py", suite=SUITE, est_time=900, stats=stats)
    unmeasured = HistoryNote(file="t/c.py", suite=SUITE, est_time=10, stats=Stats(file="t/c.py", suite=SUITE))  # fmt: skip
    assert [below_p90(n) for n in (low, enough, unmeasured)] == [True, False, False]
    below = UnderBudget(file="t/a.py", suite=SUITE, est_time=790, p90=840, n=8)
    v = static_verdict(StaticReport(history=[low, enough, unmeasured], under_p90=[below]))
    assert v.level == "warn"
    assert headline(v, WORDS, "ci-budget") == (
        "⚠️ ci-budget: 1 est_time below the measured p90 (`t/a.py`: 790s < p90 840s)"
    )


def test_guard_rows_the_pr_brings_are_the_verdict_and_those_at_the_base_context():
    lazy = _row("lazy test_prefill_cache_hit", ArchCell(raw="n/a", na=True),
                ["unverified on CI arch"], 22)  # fmt: skip
    silent = _row("test_logprobs_match", ArchCell(raw="0.0", values=[0.0]), ["silent on CI arch"])
    report = StaticReport(arch_rows=[silent, lazy], arch_rows_before=[silent])
    v = static_verdict(report)
    assert v.level == "warn" and [f.kind for f in v.findings] == ["unverified"]
    assert headline(v, WORDS, "ci-budget") == (
        "⚠️ ci-budget: 1 guard row unverified on SM90 (lazy test_prefill_cache_hit)"
    )
    assert context(v, WORDS) == (
        "Not this PR's doing: 1 guard row already silent on SM90 at the base (test_logprobs_match)."
    )
    # without the base's rows, both are the PR's
    alone = static_verdict(StaticReport(arch_rows=[silent, lazy]))
    assert [f.kind for f in alone.findings] == ["unverified", "silent"]


def _run(statuses: list[tuple[str, float, str]], arch_rows=()) -> object:
    regs = [reg(f, 100, SUITE, line=3) for f, _, _ in statuses]
    files = [FileResult(path=f, suite=SUITE, elapsed=e, status=s) for f, e, s in statuses]
    return build_report(regs, [RunResults(files=files)], Config(), arch_rows=arch_rows)


def test_the_run_verdict_is_timeouts_failures_overruns_and_guard_rows_worst_first():
    lazy = _row("lazy test_prefill_cache_hit", ArchCell(raw="n/a", na=True),
                ["unverified on CI arch"])  # fmt: skip
    report = _run(
        [("t/slow.py", 300, "timeout"), ("t/big.py", 150, "passed"), ("t/near.py", 90, "passed"),
         ("t/ok.py", 60, "passed"), ("t/bad.py", 20, "failed")],
        arch_rows=[lazy],
    )  # fmt: skip
    v = run_verdict(report)
    assert v.level == "fail"
    assert [f.kind for f in v.findings] == ["timeout", "failed", "over", "unverified"]
    assert [f.kind for f in v.context] == ["near"]
    assert headline(v, Words(name=plain, text=plain), "ci-budget") == (
        "🛑 ci-budget: 1 file timed out (t/slow.py); 1 file failed (t/bad.py); "
        "1 file over budget (t/big.py); 1 guard row unverified on SM90 (lazy test_prefill_cache_hit)"
    )
    calm = run_verdict(_run([("t/near.py", 90, "passed"), ("t/ok.py", 60, "passed")]))
    assert calm.level == "ok" and calm.context[0].count == 1  # near is context, not the verdict


def test_many_of_a_kind_are_counted_not_named():
    report = _run([(f"t/over_{i}.py", 150, "passed") for i in range(3)])
    assert headline(run_verdict(report), WORDS, "ci-budget") == "⚠️ ci-budget: 3 files over budget"


# ---- the static report of real PR shapes, through the CLI ----


def _guard_pr(tmp_path: Path) -> tuple[Path, str]:
    """#35030 (ace73141 against d3589a72): a lazy row whose SM90 cell is n/a joins a table
    with a row already silent on SM90, and est_time goes from 600 to 790."""
    head = (FIXTURES / "test_unified_radix_cache_kl_hybrid_bitexact.py").read_text("utf-8")
    lazy = next(x for x in head.splitlines(keepends=True) if "lazy test_prefill_cache_hit" in x)
    para = head[head.index("The lazy row was measured") : head.index("`test_prefill_cache_hit` is")]
    base = head.replace(lazy, "").replace(para, "").replace("est_time=790", "est_time=600")
    repo = tmp_path / "repo"
    (repo / GUARD).parent.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / GUARD).write_text(base, encoding="utf-8")
    (repo / "test/registered/test_other.py").write_text(_reg(300))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    sha = git(repo, "rev-parse", "HEAD")
    (repo / GUARD).write_text(head, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "the PR")
    return repo, sha


def test_35030s_unverified_sm90_row_is_in_the_headline(tmp_path: Path):
    repo, base = _guard_pr(tmp_path)
    out = tmp_path / "budget.md"
    proc = _cli(repo, "--base", base, "--format", "markdown", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert (
        lines[1] == "## ⚠️ ci-budget: 1 guard row unverified on SM90 (lazy test_prefill_cache_hit)"
    )
    assert lines[5] == (
        "_Not this PR's doing: 1 guard row already silent on SM90 at the base "
        "(test_logprobs_match)._"
    )


def test_35030_with_history_names_the_est_time_below_its_p90_too(tmp_path: Path):
    repo, base = _guard_pr(tmp_path)
    store = tmp_path / "history.json"
    _history(store, GUARD, SUITE, [700, 760, 800, 820, 835, 840, 850, 860])
    out = tmp_path / "budget.md"
    proc = _cli(repo, "--base", base, "--history", str(store), "--format", "markdown",
                "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    heading = out.read_text(encoding="utf-8").splitlines()[1]
    assert heading == (
        "## ⚠️ ci-budget: 1 est_time below the measured p90 "
        "(`test_unified_radix_cache_kl_hybrid_bitexact.py`: 790s < p90 860s); "
        "1 guard row unverified on SM90 (lazy test_prefill_cache_hit)"
    )


def test_35407s_unchanged_suite_at_its_timeout_is_not_the_verdict(tmp_path: Path):
    """#35407's gb300 suite: 1,800 s of a 30 min timeout before and after; the PR only
    removes one 30 s registration from it."""
    t = "test/registered/4-gpu-models/"
    files = {f"{t}test_{i}.py": est for i, est in enumerate((1800, 600, 300, 90, 30, 30, 30))}
    repo = tmp_path / "repo"
    (repo / t).mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    config = '[stage-timeouts]\nbase-c = 30\n\n[suite-shards]\n"base-c-test-4-gpu-gb300" = 3\n'
    (repo / "ci-budget.toml").write_text(config)
    for rel, est in files.items():
        (repo / rel).write_text(_reg(est, stage="base-c", runner="4-gpu-gb300"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    sha = git(repo, "rev-parse", "HEAD")
    (repo / f"{t}test_6.py").write_text("def test_x():\n    pass\n")
    git(repo, "commit", "-q", "-am", "the PR")
    gh = tmp_path / "gh"
    gh.mkdir()
    out = tmp_path / "budget.md"
    proc = _cli(repo, "--base", sha, "--format", "markdown", "--out", str(out), env_files=gh)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[1] == "## ✅ ci-budget: nothing to act on"
    assert "`base-c-test-4-gpu-gb300` was already near its stage timeout (1,800s of 30 min)" in text
    row = next(x for x in text.splitlines() if x.endswith("| `base-c-test-4-gpu-gb300` |"))
    assert row.startswith("| ℹ️ near, not made worse | 1,800s → 1,800s of 30 min (100%) |")
    outputs = (gh / "output").read_text()
    assert "budget-risk<<" in outputs and "verdict<<" in outputs
    assert "\nfail\n" not in outputs and "\nwarn\n" not in outputs  # risk ok, verdict ok


def test_a_comment_is_news_only_for_a_change_ci_budget_watches_or_a_finding():
    """--comment-mode changes: what creates a comment (an existing one is updated anyway)."""
    assert not static_news(StaticReport())  # a PR that touches no registration
    unchanged = _suite(1800, 1800, "near")  # context only, not the PR's doing
    assert not static_news(StaticReport(suites=[unchanged]))
    est = Change(file="t/a.py", backend="cuda", kinds=["est_time"], est_before=600, est_after=790)
    assert static_news(StaticReport(changes=[est]))
    sharded = _suite(900, 900, "ok", shards_before=2, shards_after=3)
    assert static_news(StaticReport(suites=[sharded]))
    broken = Problem(file="t/a.py", line=3, message="est_time must be a number")
    assert static_news(StaticReport(errors_introduced=[broken]))
    assert static_news(StaticReport(suites=[_suite(1700, 1900, "over")]))  # a finding alone
    lazy = _row("lazy", ArchCell(raw="n/a", na=True), ["unverified on CI arch"])
    assert static_news(StaticReport(arch_rows=[lazy]))  # a guard row the PR flags
    assert not static_news(StaticReport(arch_rows=[lazy], arch_rows_before=[lazy]))
    assert not run_news(_run([("t/ok.py", 60, "passed"), ("t/near.py", 90, "passed")]))
    assert run_news(_run([("t/big.py", 150, "passed")]))
    assert run_news(_run([("t/bad.py", 20, "failed")]))
    assert not run_news(_run([]))  # nothing ran


# ---- measured headroom on sglang's real suite and published model ----

MODEL = FIXTURES.parent / "sglang-ci-stats" / "model-base-b-test-1-gpu-large.json"


def _suite_pr(tmp_path: Path, before: int, after: int, changed: str = GUARD) -> tuple[Path, str]:
    """sglang's base-b-test-1-gpu-large at d3589a725 (its 122 registrations, as read from the
    real tree) in an sglang-shaped checkout whose pr-test.yml gives the suite 30 min, as
    sglang's does; the PR sets `changed`'s est_time from `before` to `after`."""
    import json

    from tests.sglang_tree import PR_TEST, make_tree

    data = json.loads((FIXTURES / "registry-base-b-test-1-gpu-large.json").read_text())

    def call(entry: dict, est: float) -> str:
        off = f", disabled={entry['disabled']!r}" if entry.get("disabled") else ""
        return f'register_cuda_ci(est_time={est:g}, stage="base-b", runner_config="1-gpu-large"{off})\n'

    regs = data["registrations"]
    tests = {rel: call(e, before if rel == changed else e["est_time"]) for rel, e in regs.items()}
    repo = make_tree(tmp_path / "repo", tests)
    pr_test = PR_TEST.replace(
        "runner_config: 1-gpu-large, run_timeout_minutes: '10'",
        "runner_config: 1-gpu-large, run_timeout_minutes: '30'",
    )
    (repo / ".github/workflows/pr-test.yml").write_text(pr_test)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    sha = git(repo, "rev-parse", "HEAD")
    (repo / changed).write_text(
        call(regs[changed], after) + '\nif __name__ == "__main__":\n    print()\n'
    )
    git(repo, "commit", "-q", "-am", "the PR")
    return repo, sha


def _static(repo: Path, base: str, *extra: str) -> tuple[dict, list[str]]:
    import json

    out = repo.parent / "budget.md"
    proc = _cli(repo, "--base", base, "--partition-model", str(MODEL), "--format", "markdown",
                "--out", str(out), *extra)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.with_suffix(".json").read_text())
    return data, out.read_text(encoding="utf-8").splitlines()


def _changed_row(lines: list[str]) -> str:
    return next(x for x in lines if "test_unified_radix_cache_kl_hybrid_bitexact.py:" in x)


def test_35030_and_35143_on_the_published_model_say_the_file_is_not_in_it(tmp_path: Path):
    """The newest published model (fit window from 2026-06-24) predates the file (added
    2026-08-13): no measured number, and the row says so. Shard counts are sglang's own:
    its compute_partitions.py, given this model, dispatches 12 shards at d3589a725, ace731417
    and 6e8a4abb5."""
    for before, after in ((600, 790), (790, 1150)):
        repo, base = _suite_pr(tmp_path / str(after), before, after)
        data, lines = _static(repo, base)
        [suite] = data["suites"]
        assert (suite["shards_before"], suite["shards_after"]) == (12, 12)
        assert lines[1] == "## ✅ ci-budget: nothing to act on"
        assert "not measured: no entry in the model" in _changed_row(lines)


def test_35030_and_35143_with_the_measured_655s_show_their_headroom(tmp_path: Path):
    """With the file's measured runs (p90 655 s): #35030's 790 s is +32 % with 17 % headroom,
    #35143's 1,150 s is +46 % with 43 % headroom; neither is a finding."""
    runs = [610, 620, 630, 635, 640, 645, 650, 655, 655, 700]
    for before, after, change, room in ((600, 790, "+32%", "17%"), (790, 1150, "+46%", "43%")):
        repo, base = _suite_pr(tmp_path / str(after), before, after)
        store = tmp_path / f"history-{after}.json"
        _history(store, GUARD, SUITE, runs)
        data, lines = _static(repo, base, "--history", str(store))
        row = _changed_row(lines)
        assert (
            f"({change}) | **{room} headroom** over p90 655s (10 runs, ci-budget history) |" in row
        )
        [c] = data["changes"]
        assert (c["p90"], c["n"], c["measured_from"], c["under_p90"]) == (
            655.0, 10, "ci-budget history", False,
        )  # fmt: skip
        assert round(c["headroom"], 3) == round((after - 655) / after, 3)  # in the JSON too
        assert lines[1] == "## ✅ ci-budget: nothing to act on"


def test_a_budget_cut_below_the_models_p90_is_the_verdict(tmp_path: Path):
    """A file the model measures (test_spec_eagle_stress.py: p90 894 s over the model's 15
    runs) cut to 800 s: the verdict names it, with where the number comes from."""
    stress = "test/registered/spec/eagle/test_spec_eagle_stress.py"
    repo, base = _suite_pr(tmp_path, 900, 800, changed=stress)
    data, lines = _static(repo, base)
    assert lines[1] == (
        "## ⚠️ ci-budget: 1 est_time below the measured p90 (`test_spec_eagle_stress.py`: "
        "800s < p90 894s)"
    )
    row = next(x for x in lines if "test_spec_eagle_stress.py:" in x)
    assert "| ⚠️ **12% below** p90 894s (15 runs, sglang-ci-stats model) |" in row
    assert data["under_p90"][0]["measured_from"] == "sglang-ci-stats model"
