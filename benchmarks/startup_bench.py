"""Start-up: `ci-budget --help` and `ci-budget plan` as whole processes, best of N.

Baseline: `python -c pass` (the interpreter's own start) in the same run. `python -X importtime`
gives the top importers. Which modules a command loads is read from `sys.modules` when it exits,
so modules loaded through `importlib` (each subcommand is) are counted too; `--help` must not
load pydantic, PyGithub or requests, `plan` no network library, and `run` (a GPU job, whose
venv holds neither) neither the GitHub client nor pytest.
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


# Runs the CLI in-process, then lists every module loaded beyond a bare interpreter's.
_LOADED = (
    "import sys; before = set(sys.modules); from ci_budget.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write('\\nLOADED ' + ' '.join(sorted(set(sys.modules) - before)))\n"
)


def loaded_modules(args: list[str], env: dict, cwd: Path) -> list[str]:
    """Every module `ci-budget ARGS` loads (beyond the interpreter's own start)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LOADED, *args], env=env, cwd=cwd, capture_output=True, text=True
    )
    marker = proc.stderr.rfind("\nLOADED ")
    if marker < 0:
        raise RuntimeError(f"ci-budget {' '.join(args)} did not finish: {proc.stderr[-500:]}")
    return proc.stderr[marker + len("\nLOADED ") :].split()


def _heavy(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(
        m for m in modules if m in prefixes or m.split(".")[0] in prefixes and "." not in m
    )


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
        plan_argv = [*cli, "plan", "--suite", "stage-a-test-1-gpu", "--format", "json"]
        plan_s = _best(max(1, repeat // 2), plan_argv, env, root)
        run_argv = [*cli, "run", "--suite", "stage-a-test-1-gpu", "--dry-run"]
        run_s = _best(max(1, repeat // 2), run_argv, env, root)
        run_mods = loaded_modules(run_argv[3:], env, root)
        top, _ = _importtime(["-m", "ci_budget.cli", "--help"], env, root)
        plan_top, _ = _importtime(plan_argv[1:], env, root)
        help_mods = loaded_modules(["--help"], env, root)
        plan_mods = loaded_modules(plan_argv[3:], env, root)
    heavy = _heavy(help_mods, HEAVY)
    tops = ", ".join(f"{n.strip()} {us / 1000:.0f}ms" for us, n in top)
    plan_tops = ", ".join(f"{n.strip()} {us / 1000:.0f}ms" for us, n in plan_top)
    gh = _heavy(plan_mods, ("github", "requests"))
    run_gh = _heavy(run_mods, ("github", "requests", "pytest"))
    ours = sum(m.startswith("ci_budget") for m in plan_mods)
    return [
        Row(
            "start-up: ci-budget --help (whole process)",
            base,
            help_s,
            None,
            f"{len(help_mods)} modules loaded; top importers: {tops}; "
            f"heavy modules loaded: {heavy or 'none'}",
            ok=not heavy,
            limit=0.2,
        ),
        Row(
            "start-up: ci-budget plan --suite (whole process)",
            base,
            plan_s,
            None,
            f"{len(plan_mods)} modules loaded ({ours} of ci-budget's); top importers: "
            f"{plan_tops}; network libraries loaded: {gh or 'none'}",
            ok=not gh,
        ),
        Row(
            "start-up: ci-budget run --dry-run (whole process)",
            base,
            run_s,
            None,
            f"{len(run_mods)} modules loaded "
            f"({sum(m.startswith('ci_budget') for m in run_mods)} of ci-budget's); "
            f"GitHub client or pytest loaded: {run_gh or 'none'} (a GPU job's venv has neither)",
            ok=not run_gh,
        ),
    ]
