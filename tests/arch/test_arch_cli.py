"""`ci-budget guard check` and `ci-budget guard fill` on real files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ci_budget.arch.docstrings import parse_source
from ci_budget.cli import main
from ci_budget.config import Config
from ci_budget.models import ClassTiming, FileResult, GpuInfo, RunMeta, RunResults
from ci_budget.models import TestTiming as Timing

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arch"
SGLANG = "test_unified_radix_cache_kl_hybrid_bitexact.py"
REL = f"test/registered/radix_cache/{SGLANG}"


def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    target = tmp_path / REL
    target.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / SGLANG, target)
    return tmp_path


def results(tmp_path: Path, arch: str, values: dict[str, float]) -> Path:
    cases = [
        Timing(nodeid=f"{REL}::{cls}::{test}", user_properties={"avg_kl_div": v})
        for (cls, test), v in ((k.split("::"), v) for k, v in values.items())
    ]
    res = RunResults(
        meta=RunMeta(gpu=GpuInfo(name="GPU", arch=arch)),
        files=[FileResult(path=REL, classes=[ClassTiming(name="x", test_cases=cases)])],
    )
    path = tmp_path / f"results-{arch}.json"
    path.write_text(res.model_dump_json())
    return path


def test_arch_json_for_a_suite(tmp_path, capsys):
    root = repo(tmp_path)
    rc = main(
        [
            "guard",
            "check",
            "--root",
            str(root),
            "--suite",
            "base-b-test-1-gpu-large",
            "--format",
            "json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["problems"] == []
    flags = {(r["group"], r["case"]): r["flags"] for r in out["rows"]}
    assert flags[("#34184", "lazy test_prefill_cache_hit")] == ["unverified on CI arch"]
    assert flags[("#34184", "test_logprobs_match")] == ["silent on CI arch"]
    assert out["rows"][5]["reverted"]["sm100"]["values"] == [9.43e-06, 1.16e-05]
    assert {r["file"] for r in out["rows"]} == {REL} and out["rows"][0]["line"] == 18


def test_arch_fail_on_flags_and_arch_option(tmp_path, capsys):
    root = repo(tmp_path)
    path = str(root / REL)
    assert main(["guard", "check", "--root", str(root), path, "--fail-on-flags"]) == 1
    assert "silent on CI arch" in capsys.readouterr().out
    assert main(["guard", "check", "--root", str(root), path]) == 0
    capsys.readouterr()
    assert (
        main(["guard", "check", "--root", str(root), path, "--arch", "B200", "--fail-on-flags"])
        == 1
    )
    silent = [ln for ln in capsys.readouterr().out.splitlines() if "silent on CI arch" in ln]
    assert len(silent) == 1 and ":21 " in silent[0] and "sm100" in silent[0]
    assert main(["guard", "check", "--root", str(root), path, "--arch", "Z80"]) == 2
    assert "--arch Z80" in capsys.readouterr().err
    assert main(["guard", "check", "--root", str(root), "missing.py"]) == 2


def test_arch_table_fill_round_trip_and_write(tmp_path, capsys):
    root = repo(tmp_path)
    before = (root / REL).read_text()
    res = results(
        tmp_path,
        "sm90",
        {
            "TestKLLazy::test_prefill_cache_hit": 7.25e-06,
            "TestKL::test_logprobs_match": 1.234567e-04,
        },
    )
    argv = ["guard", "fill", "--root", str(root), str(root / REL), "--fill-from", str(res)]
    assert main(argv + ["--reverted"]) == 0
    printed = capsys.readouterr().out
    assert "7.25e-06" in printed and "1.23e-04" in printed
    assert (root / REL).read_text() == before  # a suggestion only
    assert main(argv + ["--reverted", "--write"]) == 0
    after = (root / REL).read_text()
    changed = [
        n + 1 for n, (a, b) in enumerate(zip(before.split("\n"), after.split("\n"), strict=True))
        if a != b
    ]  # fmt: skip
    assert changed == [18, 22]  # only the two rows; layout kept, nothing widened
    rows, problems, _ = parse_source(after, REL, Config().gpu_arch_map())
    assert problems == []
    by_case = {(r.group, r.case): r for r in rows}
    assert by_case[("#34184", "lazy test_prefill_cache_hit")].reverted["sm90"].values == [7.25e-06]
    assert by_case[("#34184", "test_logprobs_match")].reverted["sm90"].values == [1.23e-04]
    assert by_case[("#34184", "test_logprobs_match")].reverted["sm100"].raw == "5.58e-07"
    line = after.split("\n")[21]
    assert line.index("7.25e-06") + len("7.25e-06") == before.split("\n")[21].index("n/a") + 3


def test_arch_table_write_keeps_every_byte_it_does_not_change(tmp_path, capsys):
    """A CRLF file stays CRLF: it is written as the LF file is, but for its line endings."""
    written = {}
    for name, ending in (("lf", b"\n"), ("crlf", b"\r\n")):
        (tmp_path / name).mkdir()
        root = repo(tmp_path / name)
        lf = (root / REL).read_bytes()
        (root / REL).write_bytes(lf.replace(b"\n", ending))
        (root / REL).chmod(0o750)
        res = results(tmp_path / name, "sm90", {"TestKLLazy::test_prefill_cache_hit": 7.25e-06})
        argv = ["guard", "fill", "--root", str(root), str(root / REL), "--fill-from", str(res)]
        assert main(argv + ["--reverted", "--write"]) == 0
        written[name] = (root / REL).read_bytes()
        assert (root / REL).stat().st_mode & 0o777 == 0o750  # replaced whole, mode kept
        assert [p.name for p in (root / REL).parent.iterdir()] == [Path(REL).name]
    assert b"7.25e-06" in written["lf"] and written["lf"] != lf
    assert written["crlf"] == written["lf"].replace(b"\n", b"\r\n")


NARROW = '''"""Guard with narrow columns.

               fix reverted      fix
            SM100   SM90    in place
  #7  test_a  1.0    0.0         0.0
      test_b  0.0    n/a         0.0
"""

import os
'''


def test_arch_table_widens_column_when_value_does_not_fit(tmp_path, capsys):
    root = repo(tmp_path)
    (root / "narrow.py").write_text(NARROW)
    res = tmp_path / "r.json"
    res.write_text(
        RunResults(
            meta=RunMeta(gpu=GpuInfo(name="NVIDIA H100 80GB HBM3", arch="sm90")),
            files=[
                FileResult(
                    path="narrow.py",
                    classes=[
                        ClassTiming(
                            name="narrow.py::T",
                            test_cases=[
                                Timing(
                                    nodeid="narrow.py::T::test_b",
                                    user_properties={"avg_kl_div": 1.5e-06},
                                )
                            ],
                        )
                    ],
                )
            ],
        ).model_dump_json()
    )
    argv = ["guard", "fill", "--root", str(root), str(root / "narrow.py"), "--fill-from", str(res)]
    assert main(argv + ["--reverted", "--write"]) == 0
    before, after = NARROW.split("\n"), (root / "narrow.py").read_text().split("\n")
    changed = [n + 1 for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [3, 4, 5, 6]  # the table is widened, nothing else changes
    assert after[3].index("SM90") > before[3].index("SM90")
    rows, problems, _ = parse_source("\n".join(after), "narrow.py", Config().gpu_arch_map())
    assert problems == []
    assert [(r.group, r.case, {a: c.raw for a, c in r.reverted.items()}, r.fixed.raw)
            for r in rows] == [
        ("#7", "test_a", {"sm100": "1.0", "sm90": "0.0"}, "0.0"),
        ("#7", "test_b", {"sm100": "0.0", "sm90": "1.50e-06"}, "0.0"),
    ]  # fmt: skip


def test_arch_table_fixed_column_by_default_and_errors(tmp_path, capsys):
    root = repo(tmp_path)
    res = results(tmp_path, "sm90", {"TestKL::test_decode_cache_hit": 2e-08})
    argv = ["guard", "fill", "--root", str(root), str(root / REL), "--fill-from", str(res)]
    assert main(argv + ["--write"]) == 0
    rows, _, _ = parse_source((root / REL).read_text(), REL, Config().gpu_arch_map())
    assert rows[2].fixed.values == [2e-08] and rows[2].reverted["sm90"].raw == "0.0"
    none = results(tmp_path, "sm90", {"TestKL::test_nothing": 1.0})
    assert main(argv[:-1] + [str(none)]) == 1
    assert "matched" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"files": 3}')
    assert main(argv[:-1] + [str(bad)]) == 2
    assert "not a results file: files" in capsys.readouterr().err


def test_cli_subprocess_help_and_print(tmp_path):
    root = repo(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "guard", "fill", str(root / REL), "--root", str(root)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"{REL}:16:\n") and "SM100 (B200) SM90 (H200)" in run.stdout
