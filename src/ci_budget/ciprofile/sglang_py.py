"""Facts read from sglang's CI scripts by AST, never by running them: which arguments a
registration takes and which backends the register functions mean (`ci_register.py`); which
backends, pinned shard counts, reusable stage workflows, throttle and test globs the dispatch
uses (`compute_partitions.py`). Each reader returns None for a fact it cannot find."""

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


def dispatch_rules(source: str) -> dict | None:
    """{"backends", "pinned", "stage_uses", "cpu_unthrottled", "globs"} from
    compute_partitions.py, or None when it does not parse or lacks the core facts."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = _assigned(tree)
    targets = names.get("_TARGET_BACKENDS")
    uses = _strings(names.get("_REUSABLE_STAGE_USES"))
    pinned_node = names.get("_BASE_A_OVERRIDES")
    if not isinstance(targets, (ast.Set, ast.Tuple, ast.List)) or uses is None:
        return None
    pinned = {}
    if isinstance(pinned_node, ast.Dict):
        for key, value in zip(pinned_node.keys, pinned_node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                pinned[key.value] = value.value
    return {
        "backends": [b for b in map(_backend, targets.elts) if b],
        "pinned": pinned,
        "stage_uses": uses,
        "cpu_unthrottled": _cpu_unthrottled(tree),
        "globs": discovery_globs(tree),
    }
