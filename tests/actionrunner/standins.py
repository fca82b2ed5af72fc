"""Local equivalents of published actions whose work the harness can do itself.

- `actions/github-script`: the step's script runs under Node (github_script.mjs) against the
  GitHub stand-in, with the inputs, context and outputs the action gives it.
- `dorny/paths-filter`: the files the PR changed (git, merge base to head, in the job's
  checkout: what GitHub's PR files list holds) matched against each filter's picomatch globs
  (`**`, extglobs such as `!(*.md)`, dot files), with the action's outputs: `NAME` true/false,
  `NAME_count`, `changes` (the JSON list of matched filters).
- `actions/setup-python`: the interpreter running the harness, first on the job's PATH.
- the workflow-level helpers of reusable workflows and matrices (`typed_inputs`,
  `matrix_rows`).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from .expressions import Unsupported

SHIM = Path(__file__).with_name("github_script.mjs")
OPENAPI = Path(__file__).resolve().parents[1] / "fixtures" / "github" / "openapi-subset.json"


def github_script_step(with_: dict[str, Any], token: str) -> tuple[str, dict[str, str]]:
    """(the bash line, the environment) that run the script as the action would."""
    unknown = set(with_) - {"script", "github-token", "result-encoding"}
    if unknown:
        raise Unsupported(f"actions/github-script: inputs {sorted(unknown)}")
    env = {
        "INPUT_SCRIPT": str(with_.get("script", "")),
        "INPUT_GITHUB-TOKEN": str(with_.get("github-token") or token),
        "INPUT_RESULT-ENCODING": str(with_.get("result-encoding", "json")),
        "HARNESS_OPENAPI": str(OPENAPI),
    }
    return f'node "{SHIM}"', env


def _patterns(rules: Any, name: str) -> list[str]:
    out: list[str] = []
    for rule in rules if isinstance(rules, list) else [rules]:
        if isinstance(rule, list):
            out += _patterns(rule, name)
        elif isinstance(rule, str):
            out.append(rule)
        else:  # {added|modified: glob}: change types, which no workflow here uses
            raise Unsupported(f"dorny/paths-filter: filter {name!r}: rule {rule!r}")
    return out


def changed_files(workspace: Path, event: dict[str, Any]) -> list[str]:
    pull = event.get("pull_request")
    if not pull:
        raise Unsupported("dorny/paths-filter: only pull_request events (a base to compare with)")
    done = subprocess.run(
        ["git", "-C", str(workspace), "diff", "--name-only", "--no-renames",
         f"{pull['base']['sha']}...{pull['head']['sha']}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line for line in done.stdout.splitlines() if line]


def paths_filter(with_: dict[str, Any], workspace: Path, event: dict) -> tuple[dict, str]:
    """(outputs, log) of dorny/paths-filter for the job's checkout."""
    from wcmatch import glob

    unknown = set(with_) - {"filters", "token", "base", "ref", "predicate-quantifier"}
    if unknown or with_.get("predicate-quantifier", "some") != "some":
        raise Unsupported(f"dorny/paths-filter: inputs {sorted(with_)}")
    filters = yaml.safe_load(str(with_["filters"])) or {}
    files = changed_files(workspace, event)
    flags = glob.GLOBSTAR | glob.EXTGLOB | glob.DOTGLOB | glob.BRACE
    outputs: dict[str, str] = {}
    matched: list[str] = []
    log = [f"changed files: {files}"]
    for name, rules in filters.items():
        patterns = _patterns(rules, name)
        hits = [f for f in files if any(glob.globmatch(f, p, flags=flags) for p in patterns)]
        outputs[name] = "true" if hits else "false"
        outputs[f"{name}_count"] = str(len(hits))
        if hits:
            matched.append(name)
        log.append(f"filter {name}: {hits}")
    outputs["changes"] = json.dumps(matched)
    return outputs, "\n".join(log)


def setup_python(with_: dict[str, Any], extra_path: list[str]) -> tuple[dict, str]:
    here = os.path.dirname(sys.executable)
    extra_path[:0] = [here]
    version = ".".join(map(str, sys.version_info[:3]))
    log = f"python {version} at {sys.executable} (asked for {with_.get('python-version')!r})"
    return {"python-version": version, "python-path": sys.executable}, log


def typed_inputs(declared: dict, given: dict[str, Any], what: str) -> dict[str, Any]:
    """A called or dispatched workflow's `inputs` context: each declared input, given or its
    default, as its declared type (a dispatch's strings become booleans and numbers)."""
    unknown = set(given) - set(declared)
    if unknown:
        raise Unsupported(f"{what}: no input(s) {sorted(unknown)}")
    out: dict[str, Any] = {}
    for name, spec in declared.items():
        spec = spec or {}
        if name in given:
            value = given[name]
        elif spec.get("required") and "default" not in spec:
            raise Unsupported(f"{what}: required input {name!r} not given")
        else:
            value = spec.get("default", "" if spec.get("type", "string") == "string" else None)
        out[name] = _typed(value, spec.get("type", "string"), f"{what}: input {name!r}")
    return out


def _typed(value: Any, kind: str, what: str) -> Any:
    if kind == "boolean":
        if isinstance(value, bool) or value is None:
            return bool(value)
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise Unsupported(f"{what}: {value!r} is not a boolean")
    if kind == "number":
        number = float(value or 0)
        return int(number) if number.is_integer() else number
    if kind in ("string", "choice", "environment"):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return "" if value is None else str(value)
    raise Unsupported(f"{what}: type {kind!r}")


def matrix_rows(matrix: Any, job: str) -> list[dict[str, Any]]:
    """GitHub's expansion: the product of the vectors, less `exclude`, then each `include`
    added to every combination whose original values it does not change, else as its own."""
    if not isinstance(matrix, dict):
        raise Unsupported(f"job {job}: matrix {matrix!r}")
    vectors = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    for key, values in vectors.items():
        if not isinstance(values, list):  # an empty one fails the job, as on GitHub
            raise Unsupported(f"job {job}: matrix vector {key!r} must be a list")
    combos = itertools.product(*vectors.values())
    rows = [dict(zip(vectors, combo, strict=True)) for combo in combos]
    rows = rows if vectors else []
    for drop in matrix.get("exclude") or []:
        rows = [r for r in rows if any(r.get(k) != v for k, v in drop.items())]
    originals = [dict(r) for r in rows]
    for extra in matrix.get("include") or []:
        fits = [
            i
            for i, orig in enumerate(originals)
            if all(orig[k] == v for k, v in extra.items() if k in orig)
        ]
        for i in fits:
            rows[i].update(extra)
        if not fits:
            rows.append(dict(extra))
    return rows
