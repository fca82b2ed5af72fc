"""`history suggest --partition-model`: the model's est as sglang's update_est_time.py writes it, each
suggestion saying whether that script's text match finds the registration (and why not), the
30 s / 30 % rule, and `--write` changing only the literal (CRLF kept)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

R = "test/registered/"
B = "base-b-test-1-gpu-large"
C = "base-a-test-cpu"
HEAD = "def register_cuda_ci(*a, **k):\n    pass\n\n\ndef register_cpu_ci(*a, **k):\n    pass\n\n\n"
FILES = {
    "one_line.py": 'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large")\n',
    "legacy.py": f'register_cpu_ci(est_time=5, suite="{C}")\n',
    "split.py": 'register_cuda_ci(\n    est_time=100,\n    stage="base-b",\n    runner_config="1-gpu-large",\n)\n',
    "positional.py": f'register_cpu_ci(5, "{C}")\n',
    "float.py": 'register_cuda_ci(est_time=100.0, stage="base-b", runner_config="1-gpu-large")\n',
    "order.py": 'register_cuda_ci(stage="base-b", est_time=100, runner_config="1-gpu-large")\n',
    "comment.py": '# register_cuda_ci(est_time=9, stage="base-b", runner_config="1-gpu-large")\n'
    'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large")\n',
    "small.py": 'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large")\n',
    "same.py": 'register_cuda_ci(est_time=100, stage="base-b", runner_config="1-gpu-large")\n',
}  # fmt: skip
MODEL = {
    "est": {
        B: {R + f: 400 for f in ("one_line.py", "split.py", "float.py", "order.py", "comment.py")}
        | {R + "small.py": 110, R + "same.py": 100, R + "gone.py": 50},
        C: {R + "legacy.py": 60, R + "positional.py": 61},
    }
}


def _tree(tmp_path: Path, crlf: bool = False) -> Path:
    for name, body in FILES.items():
        path = tmp_path / R / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = HEAD + body
        path.write_bytes((text.replace("\n", "\r\n") if crlf else text).encode())
    (tmp_path / "model.json").write_text(json.dumps(MODEL))
    return tmp_path


def _suggest(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "history", "suggest", "--root", str(root),
         "--partition-model", str(root / "model.json"), *args],
        capture_output=True, text=True, timeout=60, cwd=root,
    )  # fmt: skip


def test_every_change_the_updater_writes_plus_the_ones_its_text_match_misses(tmp_path: Path):
    root = _tree(tmp_path)
    proc = _suggest(root, "--all", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    got = {Path(s["file"]).name: s for s in json.loads(proc.stdout)}
    assert set(got) == set(FILES) - {"same.py"}  # same.py already says 100; gone.py is gone
    assert {n: (s["est_time"], s["suggested"]) for n, s in got.items()} == {
        "one_line.py": (100, 400), "legacy.py": (5, 60), "split.py": (100, 400),
        "positional.py": (5, 61), "float.py": (100, 400), "order.py": (100, 400),
        "comment.py": (100, 400), "small.py": (100, 110),
    }  # fmt: skip
    found = {n for n, s in got.items() if s["updater"]}
    assert found == {"one_line.py", "legacy.py", "small.py"}
    assert {n: s["updater_missed"] for n, s in got.items() if not s["updater"]} == {
        "split.py": "the call is split across lines or spaced (`(est_time=` is not written together)",
        "positional.py": "est_time is positional, not written `est_time=`",
        "float.py": "est_time is not a plain integer literal",
        "order.py": "est_time is not the call's first argument",
        "comment.py": "it reads the literal on line 9 for this suite instead",
    }  # fmt: skip
    assert not got["small.py"]["significant"] and got["one_line.py"]["significant"]
    assert all(s["source"] == "model" for s in got.values())
    default = _suggest(root, "--format", "json")
    assert "small.py" not in default.stdout  # +10 s: below 30 s / 30 % without --all


def test_write_changes_only_each_literal_and_keeps_crlf(tmp_path: Path):
    root = _tree(tmp_path, crlf=True)
    before = {n: (root / R / n).read_bytes() for n in FILES}
    proc = _suggest(root, "--write")
    assert proc.returncode == 0, proc.stderr
    for name, old in before.items():
        new = (root / R / name).read_bytes()
        if name in ("small.py", "same.py"):
            assert new == old  # below the rule (no --all) or already right
            continue
        value = b"60" if name == "legacy.py" else b"61" if name == "positional.py" else b"400"
        if name == "float.py":
            value = b"400.0"
        literal = (
            b"5"
            if name in ("legacy.py", "positional.py")
            else b"100.0"
            if name == "float.py"
            else b"100"
        )
        assert new.count(b"\r\n") == old.count(b"\r\n") and b"\n" not in new.replace(b"\r\n", b"")
        assert new == _replace_last_literal(old, literal, value), name


def _replace_last_literal(text: bytes, old: bytes, new: bytes) -> bytes:
    """The expected file: the registration's literal (the last `old` before its suite/stage)
    replaced, nothing else (comment.py's commented-out call keeps its 9)."""
    i = text.rindex(old)
    return text[:i] + new + text[i + len(old) :]


def test_a_model_that_cannot_be_read_is_one_line_and_exit_2(tmp_path: Path):
    root = _tree(tmp_path)
    (root / "model.json").write_text("{")
    proc = _suggest(root)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"warning: --partition-model {root / 'model.json'}:1:2: not valid JSON "
        "(Expecting property name enclosed in double quotes); planning on est_time"
    ]
