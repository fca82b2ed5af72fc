"""Write the hash-locked requirement files the action installs from.

    python scripts/lock.py           # rewrite requirements/*.txt (needs uv and the package index)
    python scripts/lock.py --check   # exit 1 when a lock no longer matches pyproject.toml

Two locks, from `[project.dependencies]`:
- `requirements/full.txt`: everything, for the steps that talk to GitHub (plan, report).
- `requirements/run.txt`: what `ci-budget run` imports, for GPU jobs. The GitHub client
  (PyGithub, requests, cryptography, ...) is left out, and so is pytest: the tests run with the
  repository's own interpreter, which brings pytest; ci-budget only lends it the report plugins.

Each lock starts with the sha256 of its inputs, so `--check` needs no network: CI fails when
pyproject.toml's dependencies change and the locks were not regenerated.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
LOCK_DIR = ROOT / "requirements"
PYTHON_FLOOR = "3.10"
# Not imported by `ci-budget run`: the GitHub client, and pytest (the tests' interpreter has it).
NOT_FOR_RUN = {"pygithub", "requests", "pytest"}
# Drops pytest and everything only it needs from the run lock: a marker that is never true.
RUN_OVERRIDES = ['pytest ; sys_platform == "never"']
HEADER = "# inputs-sha256: "


def _name(requirement: str) -> str:
    head = requirement.split(";")[0]
    for stop in "<>=!~[ ":
        head = head.split(stop)[0]
    return head.strip().lower().replace("_", "-")


def inputs() -> dict[str, tuple[list[str], list[str]]]:
    """Lock name -> (requirements, overrides), from pyproject.toml."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    run = [d for d in deps if _name(d) not in NOT_FOR_RUN]
    return {"full": (list(deps), []), "run": (run, list(RUN_OVERRIDES))}


def digest(requirements: list[str], overrides: list[str]) -> str:
    text = "\n".join([PYTHON_FLOOR, *requirements, "--", *overrides])
    return hashlib.sha256(text.encode()).hexdigest()


def recorded(lock: Path) -> str | None:
    if not lock.is_file():
        return None
    first = lock.read_text().split("\n", 1)[0]
    return first[len(HEADER) :].strip() if first.startswith(HEADER) else None


def check() -> list[str]:
    stale = []
    for name, (reqs, overrides) in inputs().items():
        lock = LOCK_DIR / f"{name}.txt"
        if recorded(lock) != digest(reqs, overrides):
            stale.append(f"{lock.relative_to(ROOT)} is stale: run python scripts/lock.py")
    return stale


def compile_lock(name: str, reqs: list[str], overrides: list[str], uv: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src, ovr, out = (Path(tmp) / f for f in ("in.txt", "overrides.txt", "out.txt"))
        src.write_text("\n".join(reqs) + "\n")
        ovr.write_text("\n".join(overrides) + "\n")
        cmd = [uv, "pip", "compile", "--quiet", "--universal", "--generate-hashes"]
        cmd += ["--python-version", PYTHON_FLOOR, "--no-header", "--override", str(ovr)]
        subprocess.run([*cmd, str(src), "-o", str(out)], check=True)
        body = out.read_text()
    head = (
        f"{HEADER}{digest(reqs, overrides)}\n"
        f"# ci-budget's {name} lock, written by scripts/lock.py from pyproject.toml; do not edit.\n"
    )
    (LOCK_DIR / f"{name}.txt").write_text(head + body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the locks are current")
    args = parser.parse_args(argv)
    if args.check:
        stale = check()
        print("\n".join(stale) or "locks are current")
        return 1 if stale else 0
    uv = shutil.which("uv")
    if uv is None:
        print("scripts/lock.py needs uv on PATH (pip install uv)", file=sys.stderr)
        return 2
    LOCK_DIR.mkdir(exist_ok=True)
    for name, (reqs, overrides) in inputs().items():
        compile_lock(name, reqs, overrides, uv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
