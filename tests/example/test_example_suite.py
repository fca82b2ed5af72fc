"""The bundled example suite `examples/bitexact/`, run for real in pytest and unittest subprocesses.

NumPy backend throughout: these tests never need a GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ci_budget.workspace.files import guard_files
from ci_budget.workspace.project import load_config
from ci_budget.workspace.scan import scan_tree

pytest.importorskip("numpy", reason="the example model needs numpy")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "bitexact"
GUARDS = "test/registered/radix_cache/test_hybrid_cache_kl_bitexact.py"
ALL_CASES = {
    "test_logprobs_match",
    "test_prefill_cache_hit",
    "test_decode_cache_hit",
    "multiturn branching",
    "lazy test_prefill_cache_hit",
}


def _env(bug: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    env["BITEXACT_BACKEND"] = "numpy"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if bug is not None:
        env["BITEXACT_REINTRODUCE_BUG"] = bug
    return env


def _pytest(tmp_path: Path, *args: str, cwd: Path = EXAMPLE, bug: str | None = None):
    """Run pytest on the example; returns (process, {nodeid: (outcome, properties)})."""
    xml = tmp_path / "junit.xml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *args,
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={xml}",
        ],
        cwd=cwd,
        env=_env(bug),
        capture_output=True,
        text=True,
        timeout=120,
    )
    cases = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = tag
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        nodeid = f"{case.get('classname')}::{case.get('name')}"
        cases[nodeid] = (outcome, props)
    return proc, cases


def _kl_by_case(cases, bug: str | None = None) -> dict[str, tuple[str, float]]:
    out = {}
    for outcome, props in cases.values():
        if "kl_case" in props:
            case = props["kl_case"]
            # With one fix reverted, every row is named within that fix's group.
            if bug is not None:
                assert case.startswith(f"#{bug} "), case
                case = case[len(bug) + 2 :]
            out[case] = (outcome, float(props["avg_kl_div"]))
    return out


def test_guards_pass_with_kl_exactly_zero(tmp_path):
    proc, cases = _pytest(tmp_path, GUARDS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    measured = _kl_by_case(cases)
    assert set(measured) == ALL_CASES
    for case, (outcome, kl) in measured.items():
        assert outcome == "passed", case
        assert kl == 0.0, case


# Which table rows fire with each fix reverted on NumPy (the table's SM100 stand-in column).
FIRES = {
    "34184": {"test_logprobs_match", "test_prefill_cache_hit", "lazy test_prefill_cache_hit"},
    "29792": {"multiturn branching"},
}


@pytest.mark.parametrize("bug", sorted(FIRES))
def test_reverted_fix_turns_guards_red(tmp_path, bug):
    proc, cases = _pytest(tmp_path, GUARDS, bug=bug)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    measured = _kl_by_case(cases, bug)
    assert set(measured) == ALL_CASES
    for case, (outcome, kl) in measured.items():
        if case in FIRES[bug]:
            assert outcome == "failure", case
            assert kl > 0.0, case
        else:
            assert (outcome, kl) == ("passed", 0.0), case
    assert "KL(uncached || cached) = " in proc.stdout

    # The docstring table's stand-in column holds exactly what this run measured.
    rows, problems = guard_files(EXAMPLE, [GUARDS], load_config(EXAMPLE))[:2]
    assert problems == []
    table = {row.case: row for row in rows if row.group == f"#{bug}"}
    for case, (_, kl) in measured.items():
        if case in table:
            assert table[case].reverted["sm100"].values == [float(f"{kl:.2e}")], case


def test_unknown_bug_id_is_a_clear_error(tmp_path):
    proc, cases = _pytest(tmp_path, GUARDS, bug="12345")
    assert proc.returncode == 1
    assert "BITEXACT_REINTRODUCE_BUG='12345': unknown bug id 12345" in proc.stdout
    # setUpClass builds caches too, so a class may error before its tests fail.
    assert cases and all(outcome in ("failure", "error") for outcome, _ in cases.values())


def test_script_mode(tmp_path):
    script = EXAMPLE / GUARDS
    ok = subprocess.run(
        [sys.executable, str(script), "-f"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Ran 5 tests" in ok.stderr and ok.stderr.rstrip().endswith("OK")
    assert ok.stdout.count("avg_kl_div=0.0\n") == 5

    # -f is unittest's failfast: the first red guard stops the file.
    red = subprocess.run(
        [sys.executable, str(script), "-f"],
        cwd=tmp_path,
        env=_env("34184"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert red.returncode == 1
    assert "FAILED (failures=1)" in red.stderr
    assert "Ran 5 tests" not in red.stderr


def test_registrations_scan_cleanly():
    config = load_config(EXAMPLE)
    scan = scan_tree(EXAMPLE, config)
    assert scan.errors == [] and scan.warnings == []
    by_file = {r.file: r for r in scan.registrations}
    assert {f: r.suite for f, r in by_file.items()} == {
        "test/registered/models/test_model_determinism.py": "base-a-test-1-gpu-large",
        "test/registered/models/test_vocab_parallel_logprobs.py": "base-b-test-2-gpu-large",
        GUARDS: "base-b-test-1-gpu-large",
        "test/registered/radix_cache/test_cache_soak.py": "base-b-test-1-gpu-large",
        "test/registered/radix_cache/test_long_prefix_sweep.py": "base-b-test-1-gpu-large",
        "test/registered/serving/test_server_launch.py": "base-c-test-1-gpu-large",
    }
    disabled = [f for f, r in by_file.items() if not r.enabled]
    assert disabled == ["test/registered/models/test_vocab_parallel_logprobs.py"]
    assert config.stage_timeout_s("base-b") == 600.0
    assert config.runner("1-gpu-large").arch == "sm90"


# About 10 s: the example's time-boxed files run here. Kept in the default run: the README's
# first command, end to end.
def test_whole_suite_from_repo_root(tmp_path):
    # The server-launch demo hangs on purpose (20 s, then fails): left out here.
    proc, cases = _pytest(
        tmp_path,
        "examples/bitexact/test/registered",
        "--ignore=examples/bitexact/test/registered/serving",
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The example's pytest.ini makes it the rootdir: node ids match the registered paths.
    files = {nodeid.split("::")[0].rsplit(".", 1)[0] for nodeid in cases}
    assert files == {
        "test.registered.models.test_model_determinism",
        "test.registered.models.test_vocab_parallel_logprobs",
        "test.registered.radix_cache.test_cache_soak",
        "test.registered.radix_cache.test_hybrid_cache_kl_bitexact",
        "test.registered.radix_cache.test_long_prefix_sweep",
    }
    assert all(outcome == "passed" for outcome, _ in cases.values())
    # The sweep's two tests and the soak record their KL without a table row.
    sweep = [p for o, p in cases.values() if "avg_kl_div" in p and "kl_case" not in p]
    assert len(sweep) == 3 and all(float(p["avg_kl_div"]) == 0.0 for p in sweep)
