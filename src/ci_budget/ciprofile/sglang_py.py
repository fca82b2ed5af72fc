"""Facts read from sglang's CI scripts by AST, never by running them. Each reader returns None
for a fact it cannot find.

- `ci_register.py`: which arguments a registration takes and which backends the register
  functions mean;
- `compute_partitions.py`: which backends, pinned shard counts (every `_*_OVERRIDES` table),
  reusable stage workflows, inline suite jobs, throttle and test globs the dispatch uses, and
  what of its rule ci-budget does not model;
- the `/rerun-test` handler (`scripts/ci/utils/slash_command_handler.py`): what it knows beyond
  the registry, the unregistered test directory it also searches (`MULTIMODAL_TEST_DIR`) and how
  it routes those files by path (`MULTIMODAL_PATH_TO_RUNNER`, first key the path contains; else
  `MULTIMODAL_DEFAULT_RUNNER`), and, in versions before 2026-08-09, the runner configs of legacy
  `suite=` registrations (`_LEGACY_SUITE_TO_RUNNER_CONFIG`). Its path rules give runner labels;
  ci-budget routes by runner config, so each label becomes the runner config that runs on it.
"""

from __future__ import annotations

import ast
import re

# --- ci_register.py and compute_partitions.py -------------------------------------------------


def _assigned(tree: ast.Module) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                out[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            out[stmt.target.id] = stmt.value
    return out


def _strings(node: ast.expr | None) -> list[str] | None:
    """A string, or a tuple/list/set of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out = [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
        if len(out) == len(node.elts):
            return out
    return None


def _backend(node: ast.expr) -> str | None:
    """`HWBackend.CUDA` -> "cuda"."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr.lower()
    return None


def register_rules(source: str) -> dict | None:
    """{"positional": [...], "keywords": [...], "functions": {name: backend}} from
    ci_register.py, or None when it does not parse or lacks one of them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = _assigned(tree)
    positional = _strings(names.get("_PARAM_ORDER"))
    keywords = _strings(names.get("_KWARG_ONLY"))
    mapping = names.get("REGISTER_MAPPING")
    if positional is None or keywords is None or not isinstance(mapping, ast.Dict):
        return None
    functions = {}
    for key, value in zip(mapping.keys, mapping.values, strict=True):
        backend = _backend(value)
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and backend:
            functions[key.value] = backend
    return {"positional": positional, "keywords": keywords, "functions": functions}


def before_stage(source: str) -> bool:
    """Whether ci_register.py is from before 2026-05-13: registrations take no keyword-only
    `stage=` and `runner_config=` (no `_KWARG_ONLY`)."""
    try:
        names = _assigned(ast.parse(source))
    except (SyntaxError, ValueError):
        return False
    return "_PARAM_ORDER" in names and "_KWARG_ONLY" not in names


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return stmt
    return None


def _join(node: ast.expr, env: dict[str, list[str]]) -> list[str] | None:
    """`os.path.join(root, "a", "b")` -> ["a", "b"], with names bound earlier in `env`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "join":
            parts: list[str] = []
            for arg in node.args:
                got = _join(arg, env)
                if got is None:
                    return None
                parts += got
            return parts
    return None


def discovery_globs(tree: ast.Module) -> list[str] | None:
    """The glob patterns `discover_files(repo_root)` passes to glob.glob, repo-relative."""
    func = _function(tree, "discover_files")
    if func is None or not func.args.args:
        return None
    env: dict[str, list[str]] = {func.args.args[0].arg: []}
    globs: list[str] = []
    for stmt in func.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            parts = _join(stmt.value, env)
            if parts is not None:
                env[stmt.targets[0].id] = parts
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "glob"
                and node.args
            ):
                parts = _join(node.args[0], env)
                if parts is not None:
                    globs.append("/".join(parts))
    return globs or None


def _cpu_unthrottled(tree: ast.Module) -> bool:
    """Newer scripts leave suites whose registrations are all CPU unthrottled."""
    func = _function(tree, "compute_partitions")
    return func is not None and any(
        isinstance(node, ast.Compare)
        and any(_backend(c) == "cpu" for c in [node.left, *node.comparators])
        for node in ast.walk(func)
    )


def _overrides(names: dict[str, ast.expr]) -> dict[str, int]:
    """Every `_*_OVERRIDES` table of suite -> pinned shard count, in file order."""
    pinned: dict[str, int] = {}
    for name, node in names.items():
        if name.startswith("_") and name.endswith("_OVERRIDES") and isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                    if isinstance(key.value, str) and isinstance(value.value, int):
                        pinned[key.value] = value.value
    return pinned


def _throttle(tree: ast.Module) -> int | None:
    """N of `compute_max_parallel`'s `max(size // N, 1)`."""
    func = _function(tree, "compute_max_parallel")
    for node in ast.walk(func) if func else ():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            if isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
                return node.right.value
    return None


def _not_modelled(tree: ast.Module, names: dict[str, ast.expr], throttle: int | None) -> list[str]:
    """What of this version's dispatch ci-budget does not model, one phrase each."""
    out = []
    if _function(tree, "load_run_timeouts") is None:
        target = names.get("TARGET_SECONDS")
        size = f" (TARGET_SECONDS = {ast.unparse(target)})" if target is not None else ""
        out.append(f"shards are sized by a fixed per-shard target{size}, not by pr-test.yml's "
                   "run_timeout_minutes")  # fmt: skip
    if throttle is not None and throttle != 3:
        out.append(f"max_parallel is size // {throttle}, not size // 3")
    return out


def dispatch_rules(source: str) -> dict | None:
    """{"backends", "pinned", "stage_uses", "inline", "cpu_unthrottled", "globs", "throttle",
    "not_modelled"} from compute_partitions.py, or None when it does not parse or names no
    target backends."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = _assigned(tree)
    targets = names.get("_TARGET_BACKENDS")
    if not isinstance(targets, (ast.Set, ast.Tuple, ast.List)):
        return None
    throttle = _throttle(tree)
    return {
        "backends": [b for b in map(_backend, targets.elts) if b],
        "pinned": _overrides(names),
        "stage_uses": _strings(names.get("_REUSABLE_STAGE_USES")) or [],
        "inline": _strings(names.get("_INLINE_SUITE_JOBS")) or [],
        "cpu_unthrottled": _cpu_unthrottled(tree),
        "globs": discovery_globs(tree),
        "throttle": throttle,
        "not_modelled": _not_modelled(tree, names, throttle),
    }


# --- the /rerun-test handler -------------------------------------------------------------------

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
