"""Start-up: `ci-budget --help` and `ci-budget plan` as whole processes, best of N.

Baseline: `python -c pass` (the interpreter's own start) in the same run. `python -X importtime`
of `--help` gives the top importers; `--help` must not import pydantic, PyGithub or requests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row

HEAVY = ("pydantic", "github", "requests", "ci_budget.models", "ci_budget.runner.run")


def _best(repeat: int, argv: list[str], env: dict, cwd: Path) -> float:
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def _importtime(argv: list[str], env: dict, cwd: Path) -> tuple[list[tuple[int, str]], set]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    rows, names = [], set()
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line[13:]:
            continue
        _, cumulative, name = line[12:].split("|")
        cumulative, name = cumulative.strip(), name[1:]  # name keeps its nesting indent
        if cumulative.isdigit():
            rows.append((int(cumulative), name))
            names.add(name)
    # Top-level modules only: their cumulative time includes their children.
    top = [(us, n) for us, n in rows if not n.startswith(" ")]
    return sorted(top, reverse=True)[:5], names


def run(repeat: int = 10) -> list[Row]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cli = [sys.executable, "-m", "ci_budget.cli"]
    with tempfile.TemporaryDirectory(prefix="ci-budget-start-") as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        test = root / "test" / "registered" / "test_a.py"
        test.parent.mkdir(parents=True)
        test.write_text('register_cuda_ci(est_time=60, suite="stage-a-test-1-gpu")\n')
        base = _best(repeat, [sys.executable, "-c", "pass"], env, root)
        help_s = _best(repeat, [*cli, "--help"], env, root)
        plan_argv = [*cli, "plan", "--suites", "stage-a-test-1-gpu", "--format", "json"]
        plan_s = _best(max(1, repeat // 2), plan_argv, env, root)
        top, names = _importtime(["-m", "ci_budget.cli", "--help"], env, root)
        plan_top, plan_names = _importtime(plan_argv[1:], env, root)
    heavy = sorted(n.strip() for n in names if n.strip().split(".")[0] in HEAVY)
    heavy += sorted(n.strip() for n in names if n.strip() in HEAVY[3:])
    tops = ", ".join(f"{n.strip()} {us / 1000:.0f}ms" for us, n in top)
    plan_tops = ", ".join(f"{n.strip()} {us / 1000:.0f}ms" for us, n in plan_top)
    gh = sorted({n.strip().split(".")[0] for n in plan_names} & {"github", "requests"})
    return [
        Row(
            "start-up: ci-budget --help (whole process)",
            base,
            help_s,
            None,
            f"top importers: {tops}; heavy modules imported: {heavy or 'none'}",
            ok=not heavy,
            limit=0.2,
        ),
        Row(
            "start-up: ci-budget plan --suites (whole process)",
            base,
            plan_s,
            None,
            f"top importers: {plan_tops}; network libraries imported: {gh or 'none'}",
            ok=not gh,
        ),
    ]
