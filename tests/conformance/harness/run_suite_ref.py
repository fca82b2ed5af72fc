"""Run a checkout's own `test/run_suite.py` in a child process, as its workflows call it (`cd
test && python3 run_suite.py --hw … --suite …`), with its real `ci_register.py` and `ci_utils.py`
loaded by file path. Stood in for, and only these: the `sglang` package around them (its
`cuda_coredump` says "off", its `kill_process_tree` kills the file's process and descendants
through /proc), and `tabulate` when it is not installed.

`listing`: `run_unittest_files` is replaced by one that prints each file it was handed with
the limit sglang's own `ci_utils` gives it (`timeout_per_file`, else its
`derive_timeout_per_file(est_time)`), and returns 0: the files, order and timeouts of a run,
nothing executed. Otherwise the files really run. Calls in one child share one parse of the
tree: `collect_tests` answers the same file list once.

This executes the checkout's code: use it on checkouts you trust.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MARK = "CI_BUDGET_REFERENCE "

_BOOT = r"""
import importlib.util, json, os, runpy, signal, sys, types

root, mode, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
MARK = "CI_BUDGET_REFERENCE "
for name in ("sglang", "sglang.test", "sglang.test.ci", "sglang.srt", "sglang.srt.debug_utils",
             "sglang.srt.utils"):
    sys.modules[name] = types.ModuleType(name)
coredump = types.ModuleType("sglang.srt.debug_utils.cuda_coredump")
coredump.is_enabled = lambda: False
coredump.cleanup_dump_dir = coredump.report = lambda *a, **k: None
sys.modules[coredump.__name__] = coredump


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                out += [int(entry)] + _children(int(entry))
    return out


def kill_process_tree(pid, *a, **k):
    for p in _children(pid) + [pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


common = types.ModuleType("sglang.srt.utils.common")
common.kill_process_tree = kill_process_tree
sys.modules[common.__name__] = common
try:
    import tabulate  # noqa: F401
except ImportError:
    table = types.ModuleType("tabulate")
    table.tabulate = lambda rows, headers=(), **k: "\n".join(map(str, [headers, *rows]))
    sys.modules["tabulate"] = table


def load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, rel))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


register = load("sglang.test.ci.ci_register", "python/sglang/test/ci/ci_register.py")
_collect, _seen = register.collect_tests, {}


def collect_once(files, *args, **kwargs):  # the same answer for the same files: parse once
    key = (tuple(files), args, tuple(sorted(kwargs.items())))
    if key not in _seen:
        _seen[key] = _collect(files, *args, **kwargs)
    return list(_seen[key])


register.collect_tests = collect_once
utils = load("sglang.test.ci.ci_utils", "python/sglang/test/ci/ci_utils.py")
derive = getattr(utils, "derive_timeout_per_file", None)


def listing(files, timeout_per_file=None, continue_on_error=False, **kwargs):
    rows = []
    for t in files:
        limit = timeout_per_file if timeout_per_file is not None else (
            derive(t.est_time) if derive else None)
        rows.append({"file": os.path.relpath(t.filename, root).replace(os.sep, "/"),
                     "timeout": limit})
    print(MARK + json.dumps({"files": rows, "continue_on_error": continue_on_error}), flush=True)
    return 0


if mode == "listing":
    utils.run_unittest_files = listing
os.chdir(os.path.join(root, "test"))
for call in calls:
    sys.argv = ["run_suite.py", *call]
    try:
        runpy.run_path(os.path.join(root, "test", "run_suite.py"), run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # the script's own error (an invalid suite ...): its exit is 1
        print(f"run_suite.py: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 1
    print(MARK + json.dumps({"exit": code}), flush=True)
"""


class ReferenceRunError(Exception):
    """The script could not be run at all: the message says why."""


def run_reference(
    root: Path, calls: list[list[str]], *, listing: bool, python: str = sys.executable,
    timeout: float = 900,
) -> tuple[list[dict], str]:  # fmt: skip
    """One record per call ({"files", "timeout"...} then {"exit"} in listing mode; {"exit"}
    otherwise) and the whole output."""
    mode = "listing" if listing else "run"
    try:
        done = subprocess.run(
            [python, "-c", _BOOT, str(root), mode, json.dumps(calls)],
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise ReferenceRunError(f"run_suite.py did not finish in {timeout:.0f}s") from exc
    records = [
        json.loads(line[len(MARK) :]) for line in done.stdout.splitlines() if line.startswith(MARK)
    ]
    if not any("exit" in r for r in records):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ReferenceRunError(f"test/run_suite.py: {tail[0]}")
    return records, done.stdout + done.stderr


def listings(root: Path, calls: list[list[str]]) -> list[list[dict]]:
    """Per call, the files `test/run_suite.py ARGV` runs, in order, with their per-file
    timeouts ([{"file", "timeout"}]; [] where it runs none), nothing executed."""
    records, _ = run_reference(root, calls, listing=True)
    out: list[list[dict]] = []
    files: list[dict] = []
    for record in records:
        if "files" in record:
            files = record["files"]
        elif "exit" in record:
            out.append(files)
            files = []
    return out
