"""How one test file is started and shown.

- Its command line (pytest with the report plugins, or the script as run_suite.py runs it), its
  environment, and the folder of report plugins lent to the tests' interpreter. `opts` is the
  run's `run.RunSetup`.
- The tests' environment: the runner's, less GitHub credentials and the runner's file commands.
  A test is PR code. In an Actions job the environment holds the job's token, the runtime and
  OIDC tokens (cache, artifacts, cloud credentials) and the paths of the runner's command files,
  through which a step sets outputs, environment and PATH for later steps. None of that is for
  the tests; what model tests need (HF_TOKEN, CUDA_*, proxies, ...) is kept.
- Live per-file progress on a terminal: one line redrawn in place, elapsed against est_time. In
  CI (output not a terminal) nothing here draws: the runner prints plain lines and the test
  output as before, which is what a log wants. On a terminal the test output goes to the file's
  log only, and a file that does not pass gets the tail of its log printed after it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import time
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TextIO

from ci_budget.results.phases import split_nodeid
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


def command_line(job: Job, opts, out: Path) -> tuple[list[str], Path]:
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


# Names or fnmatch patterns, matched case-sensitively (environment names are on Linux).
DEFAULT_DROP = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_CACHE_URL",
    "ACTIONS_CACHE_SERVICE_V2",
    "ACTIONS_RESULTS_URL",
    "INPUT_*",
    "CI_BUDGET_COMMENT_LOGIN",
)


# The runner's own: the job token, a job's runtime, cache and OIDC credentials (scoped to the
# default branch under pull_request_target and issue_comment) and its file commands. No
# `--env-keep` brings these back.
NEVER_KEPT = ("ACTIONS_*", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STATE",
              "GITHUB_STEP_SUMMARY", "INPUT_*", "GITHUB_TOKEN", "GH_TOKEN",
              "GH_ENTERPRISE_TOKEN")  # fmt: skip


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def scrubbed_env(
    env: Mapping[str, str], drop: Iterable[str] = (), keep: Iterable[str] = ()
) -> dict[str, str]:
    """`env` less DEFAULT_DROP and `drop`; a name matching `keep` stays whatever the rest says,
    except the runner's own credentials and file commands (NEVER_KEPT). A variable holding the
    value of a dropped token under another name (`MY_TOKEN: ${{ github.token }}`) goes too."""
    dropped = (*DEFAULT_DROP, *drop)
    keep = tuple(keep)
    kept = {
        k: v
        for k, v in env.items()
        if not _matches(k, NEVER_KEPT) and (_matches(k, keep) or not _matches(k, dropped))
    }
    tokens = {v for k, v in env.items() if k not in kept and "TOKEN" in k and len(v) >= 8}
    return {k: v for k, v in kept.items() if not any(t in v for t in tokens)}


def tests_env(drop: Iterable[str] = (), keep: Iterable[str] = ()) -> dict[str, str]:
    """The tests' environment: this process's, scrubbed (the one place it is read for them)."""
    import os

    return scrubbed_env(os.environ, drop, keep)


def step_file_env(env_text: str, path_text: str, base: Mapping[str, str]) -> dict[str, str]:
    """What an install step wrote to its own GITHUB_ENV (`NAME=value`, `NAME<<DELIM` ...
    `DELIM`) and GITHUB_PATH (a folder a line, first on PATH), as runner reads them: for the
    tests' environment, never the job's (the runner's own files are out of the sandbox's reach)."""
    found: dict[str, str] = {}
    lines = env_text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        name, eq, value = line.partition("=")
        if "<<" in line and (not eq or "<<" in name):
            name, _, delim = line.partition("<<")
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == delim), len(lines))
            found[name], i = "\n".join(lines[i + 1 : end]), end + 1
            continue
        if eq and name:
            found[name] = value
        i += 1
    folders = [x for x in path_text.splitlines() if x.strip()]
    if folders:
        path = found.get("PATH", base.get("PATH", ""))
        found["PATH"] = ":".join([*reversed(folders), *([path] if path else [])])
    return found


BAR = 20
TAIL_LINES = 30


def is_live(stream: TextIO) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM") != "dumb"


def current_test(tail: bytes) -> str:
    """The node id of the test that started last, from the tail of the progress file the
    runner's plugin writes (read by `outcome.tail`), or ""."""
    try:
        last = tail.splitlines()[-1:]
        name = json.loads(last[0]).get("nodeid", "") if last else ""
        return name if isinstance(name, str) else ""
    except (ValueError, IndexError, AttributeError, RecursionError):
        return ""


def line(tag: str, path: str, elapsed: float, est: float, test: str, width: int = 0) -> str:
    ratio = elapsed / est if est > 0 else 0.0
    filled = min(BAR, int(ratio * BAR))
    bar = "█" * filled + "░" * (BAR - filled)
    over = " OVER" if ratio > 1 else ""
    text = f"{tag} {bar} {elapsed:5.0f}s / {est:.0f}s ({ratio * 100:3.0f}%){over}  {path}"
    name = split_nodeid(test)[2] if test else ""
    if name:
        text += f" · {name}"
    width = width or shutil.get_terminal_size((120, 24)).columns
    return text[: max(20, width - 1)]  # one screen line, or \r cannot redraw it


class LiveLine:
    """Redraws one status line at most every `every` seconds; `clear` before other output."""

    def __init__(self, stream: TextIO, every: float = 0.5):
        self.stream = stream
        self.every = every
        self._shown = False
        self._last = 0.0

    def show(self, text: str) -> None:
        now = time.monotonic()
        if now - self._last < self.every:
            return
        self._last = now
        self.stream.write("\r\033[K" + text)
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False


def log_tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return text.rstrip("\n").splitlines()[-lines:]
