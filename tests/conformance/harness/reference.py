"""Run sglang's own CI scripts from a checkout, by file path: `ci_register.py` (the registry),
`compute_partitions.py` (discovery, timeouts, dispatch) in this process, and `test/run_suite.py`
itself, per shard, in a child process that lists what it would run (`run_suite_ref`): its own
glob, `filter_tests`, `auto_partition` and `--partition-model-file`. Only the standard library and
PyYAML are needed.

This executes the checkout's code: use it on checkouts you trust.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import types
import warnings
from pathlib import Path

import yaml

from tests.conformance.harness.compare import Reg, SuiteView, View
from tests.conformance.harness.run_suite_ref import listings

PARTITIONS = "scripts/ci/utils/compute_partitions.py"
RUN_SUITE = "test/run_suite.py"
RUNNER_CONFIGS = "scripts/ci/runner_configs.yml"
PR_TEST = ".github/workflows/pr-test.yml"
B200_LABEL = "4-gpu-b200"  # what check-changes substitutes for $b200_runner without kernel changes


class ReferenceError(Exception):
    """A script is missing or fails: the message names it."""


def _load(path: Path, name: str) -> types.ModuleType:
    if not path.is_file():
        raise ReferenceError(f"{path}: missing")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferenceError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - someone else's script: report, never crash
        raise ReferenceError(f"{path}: fails to load: {type(exc).__name__}: {exc}") from exc
    return module


def _reg(t, root: str) -> Reg:
    return Reg(
        file=os.path.relpath(t.filename, root).replace(os.sep, "/"),
        backend=t.backend.name.lower(),
        est_time=float(t.est_time),
        stage=getattr(t, "stage", None),
        runner_config=getattr(t, "runner_config", None),
        suite=_suite(t),
        nightly=bool(t.nightly),
        disabled=t.disabled,
    )


def _suite(t) -> str:
    """The suite a registration runs in (`effective_suite`; `suite` before stage/runner_config)."""
    return getattr(t, "effective_suite", None) or t.suite


def _jobs(root: Path) -> dict:
    data = yaml.safe_load((root / PR_TEST).read_text())
    return data.get("jobs") or {}


def _label(value, given: dict, labels: dict) -> str | None:
    """A `runs-on` as the workflow evaluates it for a PR: a literal; `${{ inputs.X }}` (the
    caller's `with.X`, itself evaluated); runs_on_map[runner_config] (runner_configs.yml's
    label); check-changes' b200_runner (the pool without sgl-kernel changes)."""
    if not isinstance(value, str):
        return None
    if "${{" not in value:
        return value
    if m := re.fullmatch(r"\$\{\{\s*inputs\.(\w+)\s*\}\}", value.strip()):
        return _label(given.get(m.group(1)), {}, labels)
    if "runs_on_map" in value:
        return labels.get(given.get("runner_config"))
    if "b200_runner" in value:
        return B200_LABEL
    return None


def _suite_runner(root: Path, job: dict, labels: dict) -> tuple[list[str], str]:
    """(runs-on, --hw) of a dispatched suite: the `runs-on` of the stage workflow it calls (or
    of its own inline job), evaluated as the workflow does; --hw from the run_suite.py call."""
    given = given if isinstance(given := job.get("with"), dict) else {}
    text = yaml.safe_dump(job)
    runs_on = job.get("runs-on")
    if isinstance(job.get("uses"), str):
        path = root / job["uses"].removeprefix("./")
        text = path.read_text() if path.is_file() else ""
        for inner in (yaml.safe_load(text) or {}).get("jobs", {}).values():
            runs_on = inner.get("runs-on")
            break
    label = _label(runs_on, given, labels)
    hw = re.search(r"run_suite\.py\s+--hw\s+(\w+)", text)
    return ([label] if label else []), (hw.group(1) if hw else "cuda")


def _call(func, **kwargs):
    accepted = inspect.signature(func).parameters
    return func(**{k: v for k, v in kwargs.items() if k in accepted})


def _read_model(cp, path: Path | None) -> dict | None:
    """The model as compute_partitions.py reads it (its own loader where it has one)."""
    if path is None:
        return None
    loader = getattr(cp, "load_partition_model", None)
    if loader is not None:
        return loader(str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def reference_view(root: Path, model_path: Path | None = None) -> View:
    """What sglang's scripts at `root` decide for a PR run (the `run-ci` dispatch), with the
    partition model file at `model_path` passed as `--partition-model-file` would be. Anything
    they raise is a ReferenceError of one line (sglang's own CI would fail there too)."""
    try:
        return _reference_view(root, model_path)
    except ReferenceError:
        raise
    except Exception as exc:  # noqa: BLE001 - someone else's scripts: report, never crash
        where = _where(exc, root)
        raise ReferenceError(
            f"sglang's CI scripts fail on this checkout{where}: {type(exc).__name__}: "
            + (str(exc).strip().splitlines() or [""])[0][:300]
        ) from None


def _where(exc: BaseException, root: Path) -> str:
    """` (in FILE:LINE)`: the checkout's frame the exception came from, if any."""
    import traceback

    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(str(root))
    ]
    if not frames:
        return ""
    return f" (in {os.path.relpath(frames[-1].filename, root)}:{frames[-1].lineno})"


def _reference_view(root: Path, model_path: Path | None) -> View:
    view = View()
    cp = _load(root / PARTITIONS, "ci_budget_ref_compute_partitions")
    partition_model = _read_model(cp, model_path)
    model = ["--partition-model-file", str(model_path.resolve())] if model_path else []
    reg_mod = cp._ci_register
    if not (root / RUN_SUITE).is_file():
        raise ReferenceError(f"{root / RUN_SUITE}: missing")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tests = reg_mod.collect_tests(cp.discover_files(str(root)), sanity_check=False)
    view.warnings += [str(w.message) for w in caught]
    view.registrations = [_reg(t, str(root)) for t in tests]
    if not hasattr(cp, "load_run_timeouts"):
        raise ReferenceError(f"{PARTITIONS}: has no load_run_timeouts (a layout before sglang "
                             "2026-05-14, which conformance does not compare)")  # fmt: skip
    timeouts = cp.load_run_timeouts(str(root / PR_TEST))
    dispatch = _call(cp.compute_partitions, tests=tests, repo_root=str(root),
                     run_timeouts=timeouts, partition_model=partition_model,
                     full_parallel=False)  # fmt: skip
    path = root / RUNNER_CONFIGS
    config = (
        (yaml.safe_load(path.read_text()) or {}).get("runner_configs", {}) if path.is_file() else {}
    )
    labels = {n: (B200_LABEL if c.get("runs_on") == "$b200_runner" else c.get("runs_on"))
              for n, c in config.items() if isinstance(c, dict)}  # fmt: skip
    jobs = {str((j.get("with") or {}).get("self_name", k)): j for k, j in _jobs(root).items()
            if isinstance(j, dict)}  # fmt: skip
    calls, where = [], []
    for suite, info in sorted(dispatch.items()):
        runs_on, hw = _suite_runner(root, jobs.get(suite, {}), labels)
        view.suites[suite] = SuiteView(info["size"], info["max_parallel"], runs_on)
        for i in range(info["size"]):  # as the stage job calls it, shard by shard
            calls.append(["--hw", hw, "--suite", suite, "--auto-partition-id", str(i),
                          "--auto-partition-size", str(info["size"])] + model)  # fmt: skip
            where.append(suite)
    for suite, files in zip(where, listings(root, calls), strict=True):
        view.suites[suite].shards.append([f["file"] for f in files])
    return view
