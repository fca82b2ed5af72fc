"""How one test file is started: its command line (pytest with the report plugins, or the script
as run_suite.py runs it), its environment, and the folder of report plugins lent to the tests'
interpreter. `opts` is the run's `run.RunSetup`."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from ci_budget.runner.environment import scrubbed_env, tests_env
from ci_budget.sharding.select import Job

# Plugins the tests' interpreter needs. On a GPU runner that interpreter is the project's own
# environment, which we must not install into; so a temp dir holding only these packages (and
# their dist-info, so pytest's entry-point lookup finds them by name) goes first on PYTHONPATH.
# Only these: ci-budget's whole site-packages would shadow the project's own pins.
PLUGIN_DISTS = ("pytest-json-report", "pytest-metadata", "pytest-reportlog")
PROGRESS_MODULE = "ci_budget_progress"


def prepare_plugin_dir(dest: Path, dists: Iterable[str] = PLUGIN_DISTS) -> Path:
    """Copy the named distributions' top-level packages and dist-info dirs into `dest`: copies,
    not links, so the tests never see (or reach through a link) ci-budget's own venv."""
    dest.mkdir(parents=True, exist_ok=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in dists:
        dist = importlib.metadata.distribution(name)
        tops = {Path(f).parts[0] for f in dist.files or () if not str(f).startswith("..")}
        for top in sorted(tops):
            if top in ("__pycache__",) or top.endswith(".pth"):
                continue
            src = Path(str(dist.locate_file(top)))
            if (dest / top).exists() or not src.exists():
                continue
            if src.is_dir():
                shutil.copytree(src, dest / top, ignore=skip)
            else:
                shutil.copyfile(src, dest / top)
    shutil.copyfile(Path(__file__).with_name("pytest_progress.py"), dest / f"{PROGRESS_MODULE}.py")
    return dest


def artifact_stem(path: str) -> str:
    return path.replace("/", "__").removesuffix(".py")


def command(job: Job, opts, out: Path) -> tuple[list[str], Path]:
    stem = artifact_stem(job.path)
    if opts.mode == "script":
        cwd = (opts.root / opts.config.script_cwd).resolve()
        target = (opts.root / job.path).resolve()
        try:
            file_arg = target.relative_to(cwd).as_posix()
        except ValueError:
            file_arg = str(target)
        return [opts.python, file_arg, "-f"], cwd
    targets = [job.path + s for s in job.selection] or [job.path]
    return [
        opts.python, "-m", "pytest", *targets,
        "-p", "pytest_jsonreport", "-p", "pytest_reportlog", "-p", PROGRESS_MODULE,
        "-p", "no:cacheprovider",
        "--json-report", f"--json-report-file={out / (stem + '.json')}",
        f"--report-log={out / (stem + '.jsonl')}",
        "-q",
    ], opts.root  # fmt: skip


def file_env(opts, plugin_dir: Path | None, progress_file: Path) -> dict:
    env = tests_env(opts.config.env_drop, opts.config.env_keep)
    env.update(scrubbed_env(opts.env_add, opts.config.env_drop, opts.config.env_keep))
    first = [str(plugin_dir)] if plugin_dir is not None else []
    if first or opts.pythonpath:
        path = (*first, *opts.pythonpath, env.get("PYTHONPATH"))
        env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    if plugin_dir is not None:
        env["CI_BUDGET_PROGRESS_FILE"] = str(progress_file)
    return env
