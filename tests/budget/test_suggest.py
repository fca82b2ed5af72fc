"""Suggestions and the in-place est_time rewrite, through the real `ci-budget history suggest` CLI."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.registry import reg

from ci_budget.budget.suggest import (
    RewriteError,
    rewrite_est_time,
    significant,
    suggest,
    suggested_value,
)
from ci_budget.config import Config, Thresholds
from ci_budget.history.model import History
from ci_budget.models import FileResult, RunMeta, RunResults
from ci_budget.registry.parse import scan_source
from ci_budget.workspace.files import save_history

MAIN = '\n\nif __name__ == "__main__":\n    main()\n'

# (file, source, suite and backend that gets history, old literal, new literal)
FORMS = {
    "positional.py": (
        'from x import register_cuda_ci\n\nregister_cuda_ci(600, "per-commit-1-gpu")\n',
        "per-commit-1-gpu",
        "cuda",
    ),
    "keyword.py": (
        'register_cuda_ci(est_time=600, stage="base-b", runner_config="1-gpu-large")\n',
        "base-b-test-1-gpu-large",
        "cuda",
    ),
    "multiline.py": (
        "register_cuda_ci(\n"
        "    # budget measured on H100, 600 s before the new kernels\n"
        "    est_time=600,  # seconds\n"
        '    stage="base-b",\n'
        '    runner_config="1-gpu-large",\n'
        ")\n",
        "base-b-test-1-gpu-large",
        "cuda",
    ),
    "several.py": (
        'register_cuda_ci(est_time=600, stage="base-a", runner_config="1-gpu-large")\n'
        'register_cuda_ci(est_time=600, stage="base-b", runner_config="1-gpu-large",)\n'
        'register_amd_ci(est_time=600, stage="base-b", runner_config="1-gpu-large")\n',
        "base-b-test-1-gpu-large",
        "cuda",
    ),
    "legacy.py": (
        'register_amd_ci(\n    est_time = 600 ,\n    suite="per-commit-amd",  # legacy\n)\n',
        "per-commit-amd",
        "amd",
    ),
    "float_unicode.py": (
        '# Grüße\nregister_cuda_ci(suite="gpu-ünï", est_time=600.0)\n',
        "gpu-ünï",
        "cuda",
    ),
    "crlf.py": (
        'register_cuda_ci(\r\n    600,\r\n    suite="crlf-suite",\r\n)\r\n',
        "crlf-suite",
        "cuda",
    ),
}


def _history(entries: list[tuple[str, str]], elapsed: list[float]) -> History:
    history = History()
    for i, seconds in enumerate(elapsed):
        history.add_results(
            RunResults(
                meta=RunMeta(commit=f"c{i}"),
                files=[
                    FileResult(path=path, suite=suite, elapsed=seconds, status="passed")
                    for path, suite in entries
                ],
            )
        )
    return history


def test_suggested_value_and_rule():
    t = Thresholds(margin=0.2, round_to=10)
    assert suggested_value(650, t) == 780
    assert suggested_value(650 / 1.2, t) == 650  # exact multiples are not bumped up
    assert significant(600, 790) and significant(600, 400)
    assert not significant(600, 620)  # 20 s
    assert not significant(1000, 1200)  # 20 %
    assert not significant(50, 75)  # 50 % but 25 s


def test_suggest_counts_only_passing_runs():
    one = reg("a.py", 600, "s", line=3)
    history = _history([("a.py", "s")], [300.0, 310.0, 320.0])
    history.add_results(
        RunResults(
            meta=RunMeta(commit="t"),
            files=[FileResult(path="a.py", suite="s", elapsed=5000.0, status="timeout")],
        )
    )
    (s,) = suggest([one], history, Thresholds())
    assert (s.suggested, s.p90, s.n, s.timeouts, s.timeout_lower_bound) == (
        390,
        320.0,
        3,
        1,
        5000.0,
    )
    assert s.delta == -210
    assert suggest([one], history, Thresholds(), min_samples=4) == []
    near = _history([("a.py", "s")], [480.0])  # 480 * 1.2 = 576: only 24 s off
    assert suggest([one], near, Thresholds()) == []
    assert len(suggest([one], near, Thresholds(), include_all=True)) == 1


def test_rewrite_errors_name_the_file():
    with pytest.raises(RewriteError, match="x.py: no cuda registration for suite 'nope'"):
        rewrite_est_time(FORMS["keyword.py"][0], "x.py", "nope", "cuda", 700, Config())


def test_cli_write_round_trips_every_form(tmp_path: Path):
    root = tmp_path / "repo"
    test_dir = root / "test" / "registered"
    test_dir.mkdir(parents=True)
    originals = {}
    for name, (source, _, _) in FORMS.items():
        text = source + MAIN.replace("\n", "\r\n") if "\r\n" in source else source + MAIN
        (test_dir / name).write_bytes(text.encode("utf-8"))
        originals[name] = text
    entries = [(f"test/registered/{name}", suite) for name, (_, suite, _) in FORMS.items()]
    # the amd registration in several.py shares the suite: history is per (file, suite), so it
    # gets the same suggestion and must be rewritten as its own literal
    store = tmp_path / "history.json"
    save_history(store, _history(entries, [600.0, 640.0, 650.0]))  # p90 650 -> 780

    proc = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "history", "suggest", "--root", str(root)]
        + ["--history", str(store), "--write"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "test/registered/keyword.py:1: base-b-test-1-gpu-large: est_time 600 -> 780" in (
        proc.stdout
    )
    config = Config()
    for name, (_, suite, backend) in FORMS.items():
        rel = f"test/registered/{name}"
        new = (test_dir / name).read_bytes().decode("utf-8")
        old = originals[name]
        changed = [
            (tag, old[i1:i2], new[j1:j2])
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
                None, old, new, autojunk=False
            ).get_opcodes()
            if tag != "equal"
        ]
        # only literal characters changed: 600 -> 780 (or 600.0 -> 780.0)
        assert changed and all(
            set(a) <= set("600.") and set(b) <= set("780.") for _, a, b in changed
        ), (name, changed)
        assert len(old.splitlines()) == len(new.splitlines())
        diff_lines = [
            line
            for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        want = 4 if name == "several.py" else 2  # cuda base-b and amd base-b
        assert len(diff_lines) == want, (name, diff_lines)
        regs = scan_source(new, rel, config).registrations
        by_key = {(r.suite, r.backend): r.est_time for r in regs}
        assert by_key[(suite, backend)] == 780
        if name == "several.py":
            assert by_key[("base-a-test-1-gpu-large", "cuda")] == 600  # no history: untouched
        if name == "float_unicode.py":
            assert "est_time=780.0)" in new
        if name == "crlf.py":
            assert "\r\n    780,\r\n" in new and "\n" not in new.replace("\r\n", "")


def test_all_never_raises_a_budget_the_runs_fit_in():
    one = reg("a.py", 5, "s", line=3)
    fast = _history([("a.py", "s")], [1.0, 1.0, 1.0])  # p90 1 s: 1.2 rounds up to 10
    assert suggest([one], fast, Thresholds(), include_all=True) == []
    slow = _history([("a.py", "s")], [6.0])  # over its 5 s: 5 -> 10 is right
    assert [s.suggested for s in suggest([one], slow, Thresholds(), include_all=True)] == [10]


def test_report_and_suggest_follow_one_rule(tmp_path: Path):
    # est_time 100 everywhere; 85 s is within 30 s / 30 % of it, 140 s and 40 s are not.
    import json

    tests = tmp_path / "test" / "registered"
    tests.mkdir(parents=True)
    measured = {"near.py": 85.0, "over.py": 140.0, "stale.py": 40.0}
    for name in measured:
        (tests / name).write_text(
            'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large")' + MAIN
        )
    suite = "base-b-test-1-gpu-large"
    files = [
        {"path": f"test/registered/{name}", "suite": suite, "elapsed": s, "status": "passed"}
        for name, s in measured.items()
    ]
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps({"schema_version": 1, "meta": {"suites": [suite]}, "files": files})
    )
    store = tmp_path / "history.json"

    def cli(*args: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", *args],
            capture_output=True, text=True, check=False, cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    cli("history", "add", str(results), "--history", str(store))
    report = json.loads(
        cli("report", "--root", str(tmp_path), "--results", str(results), "--format", "json",
            "--out", str(tmp_path / "report.md"))
    )  # fmt: skip
    from_report = {
        line["file"]: line["suggestion"] for line in report["lines"] if line["suggestion"]
    }
    suggested = json.loads(cli("history", "suggest", "--root", str(tmp_path), "--history", str(store),
                               "--format", "json"))  # fmt: skip
    from_suggest = {s["file"]: s["suggested"] for s in suggested}
    assert (
        from_report
        == from_suggest
        == {
            "test/registered/over.py": 170,
            "test/registered/stale.py": 50,
        }
    )
    assert "est_time=110" not in (tmp_path / "report.md").read_text(encoding="utf-8")
