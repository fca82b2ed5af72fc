"""A run-ci run of real size for the comment-layout tests, from a real sglang checkout:

    python -m tests.conformance.harness.run_fixture SGLANG_CHECKOUT RUNS_DIR OUT.json

- files, lines, suites, est_time and test class names: the checkout's registry (`ci-budget
  scan`) and its sources, every enabled per-commit registration of the `base-*` suites that
  sglang's scheduled full runs time (the suites named in RUNS_DIR);
- elapsed: the newest sglang-ci-stats run (`runs/*.json` in RUNS_DIR) that timed the same
  (file, suite); a file no run timed gets est_time times a ratio drawn (seeded) from the real
  measured/est_time ratios, and says so in its row;
- statuses: ci-stats keeps passing times only, so all pass except one timeout and two failures
  chosen by the seed, to show what a run that needs action looks like.

Per-class times are not stored: `tests/sglang_run.py` splits each file's time over its classes
by a fixed rule when it builds the report.
"""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from pathlib import Path

SEED = 35407


def _runs(folder: Path) -> list[dict]:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    return sorted((r for r in runs if r.get("jobs")), key=lambda r: r["started_at"], reverse=True)


def _timings(runs: list[dict]) -> dict[tuple[str, str], tuple[float, int]]:
    out: dict[tuple[str, str], tuple[float, int]] = {}
    for run in runs:  # newest first: the first time seen wins
        for job in run["jobs"]:
            for t in job.get("timings", []):
                out.setdefault((t["file"], job["suite"]), (float(t["elapsed"]), run["run_id"]))
    return out


def _classes(root: Path, rel: str) -> list[str]:
    try:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    return [n.name for n in tree.body if isinstance(n, ast.ClassDef) and "Test" in n.name]


def _alike(reg: dict, real: list[tuple[dict, float]]) -> list[float]:
    """measured/est_time of the real-timed files most like `reg`: same backend, est_time
    within a factor of 3 (at least 10 of them), else same backend."""
    same = [(r, e) for r, e in real if r["backend"] == reg["backend"] and r["est_time"] > 0]
    near = [(r, e) for r, e in same if 1 / 3 <= r["est_time"] / max(reg["est_time"], 1) <= 3]
    return sorted(e / r["est_time"] for r, e in (near if len(near) >= 10 else same))


def build(root: Path, runs_dir: Path) -> dict:
    runs = _runs(runs_dir)
    timed = _timings(runs)
    suites = {job["suite"] for run in runs for job in run["jobs"]}
    scan = subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", "scan", "--root", str(root), "--format", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    regs = [
        r
        for r in json.loads(scan.stdout)["registrations"]
        if r["suite"] in suites and r["suite"].startswith("base-") and r["backend"] in ("cuda", "cpu")
        and r["disabled"] is None and not r["nightly"]
    ]  # fmt: skip
    regs.sort(key=lambda r: (r["suite"], r["file"]))
    rng = random.Random(SEED)
    real = [
        (r, timed[(r["file"], r["suite"])][0]) for r in regs if (r["file"], r["suite"]) in timed
    ]
    rows = []
    for r in regs:
        elapsed, source = timed.get((r["file"], r["suite"]), (None, None))
        if elapsed is None:
            elapsed, source = round(r["est_time"] * rng.choice(_alike(r, real)), 1), "generated"
        rows.append(
            [r["file"], r["line"], r["backend"], r["stage"], r["runner_config"], r["suite"]]
            + [r["est_time"], elapsed, "passed", source, _classes(root, r["file"])]
        )
    gpu_rows = [i for i, row in enumerate(rows) if row[2] == "cuda"]
    for i, status in zip(rng.sample(gpu_rows, 3), ("timeout", "failed", "failed"), strict=True):
        rows[i][8] = status
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()  # fmt: skip
    return {
        "about": (
            "A run-ci run of real size: registrations from sglang (Apache-2.0, "
            "github.com/sgl-project/sglang) at the commit below, times from the "
            "sgl-project/sglang-ci-stats runs below (sglang's public CI record; that "
            "repository names no licence); made by tests/conformance/harness/run_fixture.py"
        ),
        "columns": ["file", "line", "backend", "stage", "runner_config", "suite", "est_time"]
        + ["elapsed", "status", "elapsed_from", "classes"],
        "commit": head,
        "runs": [run["run_id"] for run in runs],
        "files": rows,
    }


def main() -> None:
    root, runs_dir, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    data = build(root, runs_dir)
    lines = ",\n".join(json.dumps(row, separators=(",", ":")) for row in data.pop("files"))
    text = json.dumps(data, indent=1)[:-2] + ',\n "files": [\n' + lines + "\n ]\n}\n"
    out.write_text(text, encoding="utf-8")
    rows = json.loads(text)["files"]
    real = sum(row[9] != "generated" for row in rows)
    print(f"wrote {out}: {len(rows)} files, {real} timed by a real run")


if __name__ == "__main__":
    main()
