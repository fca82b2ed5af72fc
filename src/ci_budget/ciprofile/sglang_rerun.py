"""What sglang's `/rerun-test` handler (`scripts/ci/utils/slash_command_handler.py`) knows
beyond the registry, read by AST, never run: the unregistered test directory it also searches
(`MULTIMODAL_TEST_DIR`) and how it routes those files by path (`MULTIMODAL_PATH_TO_RUNNER`,
first key the path contains; else `MULTIMODAL_DEFAULT_RUNNER`), and, in versions before
2026-08-09, the runner configs of legacy `suite=` registrations
(`_LEGACY_SUITE_TO_RUNNER_CONFIG`). Its path rules give runner labels; ci-budget routes by
runner config, so each label becomes the runner config that runs on it.
"""

from __future__ import annotations

import ast
import re

HANDLER = "scripts/ci/utils/slash_command_handler.py"
_SHAPE = re.compile(r"(\d+)-gpu-")


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            if isinstance(stmt.targets[0], ast.Name):
                out[stmt.targets[0].id] = stmt.value
    return out


def _text(node: ast.expr | None, names: dict[str, ast.expr]) -> str | None:
    """A string literal, or a name bound to one at module level."""
    if isinstance(node, ast.Name):
        node = names.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def rerun_rules(source: str) -> dict | None:
    """{"dir", "default", "paths": {substring: label}} from the handler, or None when it has no
    such directory (older handlers) or does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = _constants(tree)
    directory = _text(names.get("MULTIMODAL_TEST_DIR"), names)
    default = _text(names.get("MULTIMODAL_DEFAULT_RUNNER"), names)
    table = names.get("MULTIMODAL_PATH_TO_RUNNER")
    if not directory or not default:
        return None
    paths = {}
    if isinstance(table, ast.Dict):
        for key, value in zip(table.keys, table.values, strict=True):
            k, v = _text(key, names), _text(value, names)
            if k is not None and v is not None:
                paths[k] = v
    return {"dir": directory.strip("/"), "default": default, "paths": paths}


def legacy_suites(source: str | None) -> dict[str, list[str]]:
    """suite -> runner configs from `_LEGACY_SUITE_TO_RUNNER_CONFIG` (a name or a list)."""
    try:
        names = _constants(ast.parse(source or ""))
    except (SyntaxError, ValueError):
        return {}
    table = names.get("_LEGACY_SUITE_TO_RUNNER_CONFIG")
    out: dict[str, list[str]] = {}
    for key, value in (
        zip(table.keys, table.values, strict=True) if isinstance(table, ast.Dict) else ()
    ):
        k = _text(key, names)
        values = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        configs = [v for v in (_text(e, names) for e in values) if v is not None]
        if k is not None and configs and len(configs) == len(values):
            out[k] = configs
    return out


def _config_for(label: str, runners: dict) -> str:
    """The runner config that runs on `label` (one named so first); else a new one, added."""
    named = runners.get(label)
    if named and named.get("runs-on") == [label]:
        return label
    for name, entry in runners.items():
        if entry.get("runs-on") == [label]:
            return name
    shape = _SHAPE.match(label)
    runners[label] = {"runs-on": [label], "gpus": int(shape.group(1)) if shape else 1}
    return label


def rerun_dirs(source: str | None, runners: dict) -> dict:
    """`github.rerun-dirs` for the handler's text; adds to `runners` (the profile's
    runner-configs) a config for any label no config runs on."""
    rules = rerun_rules(source) if source else None
    if rules is None:
        return {}
    return {
        rules["dir"]: {
            "runner": _config_for(rules["default"], runners),
            "path-runners": {k: _config_for(v, runners) for k, v in rules["paths"].items()},
        }
    }


def apply(settings: dict, handler: str | None) -> None:
    """Into a profile's `settings`: the unregistered test folders `/rerun-test` also reaches
    and the legacy suites' runner configs, as the checkout's handler has them."""
    runners = settings.setdefault("runner-configs", {})
    dirs = rerun_dirs(handler, runners)
    if dirs:
        settings.setdefault("github", {})["rerun-dirs"] = dirs
    if suites := legacy_suites(handler):
        settings.setdefault("github", {})["rerun-suites"] = suites
    if not runners:
        del settings["runner-configs"]
