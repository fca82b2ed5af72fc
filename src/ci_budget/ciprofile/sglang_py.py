"""Facts read from sglang's CI scripts by AST, never by running them: which arguments a
registration takes and which backends the register functions mean (`ci_register.py`); which
backends, pinned shard counts (every `_*_OVERRIDES` table), reusable stage workflows, inline
suite jobs, throttle and test globs the dispatch uses (`compute_partitions.py`), and what of its
rule ci-budget does not model. Each reader returns None for a fact it cannot find."""

from __future__ import annotations

import ast


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
