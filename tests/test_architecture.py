"""The layering rules, checked on the source: every package is core or edge; the core never
touches the environment, processes, the network or files, and keeps no state between calls;
`cli` reaches the rest through `app`; no module imports one that (directly or not, type-only
imports included) imports it back."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ci_budget"
CORE = (
    "registry", "sharding", "trigger", "arch", "budget", "results", "render", "history", "ciprofile",
)  # fmt: skip
CORE_MODULES = ("models", "config")
EDGES = ("workspace", "runner", "github", "cli", "app")
# Calls that change a container or an object in place.
MUTATORS = {
    "append", "extend", "insert", "update", "add", "setdefault", "pop", "popitem", "remove",
    "discard", "clear", "sort", "reverse", "appendleft", "extendleft", "popleft",
}  # fmt: skip
FORBIDDEN_MODULES = ("subprocess", "requests", "github", "socket", "urllib.request", "shutil")
FILE_CALLS = ("open", "read_text", "write_text", "read_bytes", "write_bytes", "mkdir", "unlink")
# Known debts, each with the reason it is still here; the test fails when one is paid (so the
# entry goes) or when a new one appears.
KNOWN: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def modules() -> dict[str, ast.Module]:
    return {
        module_name(p): ast.parse(p.read_text(encoding="utf-8"), str(p))
        for p in sorted(SRC.rglob("*.py"))
    }


def is_core(name: str) -> bool:
    top = name.split(".")[0]
    return top in CORE or name in CORE_MODULES


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(test)


def _runtime_nodes(tree: ast.AST):
    """Every node, except those only type checkers see (`if TYPE_CHECKING:` bodies)."""
    for child in ast.iter_child_nodes(tree):
        if _type_checking(child):
            yield from (n for stmt in child.orelse for n in ast.walk(stmt))
            continue
        yield child
        yield from _runtime_nodes(child)


def imported(tree: ast.Module, type_only: bool = False) -> list[str]:
    """Every module an import statement names, at any depth (lazy imports count; with
    `type_only`, those only type checkers see count too)."""
    out = []
    for node in ast.walk(tree) if type_only else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            out.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def violations(name: str, tree: ast.Module) -> set[tuple[str, str]]:
    found = set()
    for target in imported(tree):
        if any(target == m or target.startswith(m + ".") for m in FORBIDDEN_MODULES):
            found.add((name, target))
        if target.startswith("ci_budget.") and target.split(".")[1] in EDGES:
            found.add((name, target))
        if target in ("os.environ", "os.getenv"):
            found.add((name, target))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr in ("environ", "getenv", "system", "replace"):
                found.add((name, f"os.{node.attr}"))
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called in FILE_CALLS:
                found.add((name, called))
    return found


def test_the_core_touches_no_environment_process_network_or_file():
    found = set()
    for name, tree in modules().items():
        if is_core(name):
            found |= violations(name, tree)
    unexpected = sorted(found - set(KNOWN))
    assert not unexpected, f"the core reaches out: {unexpected}"
    stale = sorted(set(KNOWN) - found)
    assert not stale, f"paid debts still listed in KNOWN: {stale}"


def cli_reaches_past_app(name: str, tree: ast.Module) -> set[tuple[str, str]]:
    """What a `cli` module imports besides `app`, the cli itself, the package root (its version)
    and the standard library: the command line is built from the use cases and calls them, so
    all it needs is in `app`."""
    found = set()
    for target in imported(tree):
        top = target.split(".")[0]
        if top == "ci_budget":
            parts = target.split(".")
            if len(parts) > 1 and parts[1] not in ("app", "cli", "__version__"):
                found.add((name, target))
        elif top not in sys.stdlib_module_names:
            found.add((name, target))
    return found


def test_cli_imports_only_app():
    found = set()
    for name, tree in modules().items():
        if name == "cli" or name.startswith("cli."):
            found |= cli_reaches_past_app(name, tree)
    assert not found, f"cli imports past app: {sorted(found)}"


def touches_environment(name: str, tree: ast.Module) -> set[tuple[str, str]]:
    """References to the process environment: a use case gets it from `Settings` (read once)
    and hands a subprocess its own, never changing the process's for everyone."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr in ("environ", "putenv", "unsetenv", "getenv"):
                found.add((name, f"os.{node.attr}"))
    found |= {(name, t) for t in imported(tree) if t in ("os.environ", "os.putenv", "os.getenv")}
    return found


def test_no_use_case_reads_or_changes_the_process_environment():
    found = set()
    for name, tree in modules().items():
        if name.split(".")[0] in ("app", "cli"):
            found |= touches_environment(name, tree)
    assert not found, f"use cases touching os.environ: {sorted(found)}"


def graph() -> dict[str, set[str]]:
    trees = modules()
    names = {f"ci_budget.{n}" if n else "ci_budget" for n in trees}
    edges: dict[str, set[str]] = {}
    for name, tree in trees.items():
        me = f"ci_budget.{name}" if name else "ci_budget"
        edges[me] = {t for t in imported(tree, type_only=True) if t in names and t != me}
    return edges


def test_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_every_package_is_core_or_edge():
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    modules_ = {p.stem for p in SRC.glob("*.py")} - {"__init__"}
    assert not set(CORE) & set(EDGES)
    assert packages == set(CORE) | set(EDGES), "classify each package as CORE or EDGES"
    assert modules_ == set(CORE_MODULES), "classify each top-level module"


def state_changes(name: str, tree: ast.Module) -> set[tuple[str, str]]:
    """Module-level names a function rebinds (`global`) or changes in place: state kept
    between calls."""
    top = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        top |= {t.id for t in targets if isinstance(t, ast.Name)}
    found = set()
    for func in (
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ):
        for node in ast.walk(func):
            if isinstance(node, ast.Global):
                found |= {(name, f"global {n}") for n in node.names}
            changed = None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                for target in getattr(node, "targets", None) or [node.target]:
                    if isinstance(target, (ast.Subscript, ast.Attribute)):
                        changed = target.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in MUTATORS:
                    changed = node.func.value
            if isinstance(changed, ast.Name) and changed.id in top:
                found.add((name, changed.id))
    return found


def test_the_core_keeps_no_state_between_calls():
    found = set()
    for name, tree in modules().items():
        if is_core(name):
            found |= state_changes(name, tree)
    assert not found, f"module-level state in the core: {sorted(found)}"


def test_the_checks_see_what_they_look_for():
    """The rules catch what they are for (a checker that never fires proves nothing)."""
    bad = ast.parse(
        "import os, subprocess\nfrom ci_budget.workspace import git\n"
        "def f(p):\n    os.environ.get('X')\n    return open(p).read() + p.read_text()\n"
    )
    assert violations("budget.x", bad) == {
        ("budget.x", "subprocess"),
        ("budget.x", "ci_budget.workspace"),
        ("budget.x", "ci_budget.workspace.git"),
        ("budget.x", "os.environ"),
        ("budget.x", "open"),
        ("budget.x", "read_text"),
    }
    cli = ast.parse(
        "import argparse, yaml\nfrom ci_budget import __version__\nfrom ci_budget.app import run\n"
        "def f():\n    from ci_budget.workspace.git import head_commit\n"
    )
    assert cli_reaches_past_app("cli.x", cli) == {
        ("cli.x", "yaml"),
        ("cli.x", "ci_budget.workspace.git"),
        ("cli.x", "ci_budget.workspace.git.head_commit"),
    }
    env = ast.parse("import os\nfrom os import environ\nos.environ['X'] = '1'\n")
    assert touches_environment("app.x", env) == {("app.x", "os.environ")}


def test_the_state_and_cycle_checks_see_what_they_look_for():
    tree = ast.parse(
        "CACHE = {}\nSEEN = []\n_last = None\nLIMIT = {'a': 1}\n"
        "def f(k):\n    global _last\n    CACHE[k] = 1\n    SEEN.append(k)\n"
        "    return LIMIT[k]\n"
    )
    assert state_changes("budget.x", tree) == {
        ("budget.x", "global _last"),
        ("budget.x", "CACHE"),
        ("budget.x", "SEEN"),
    }
    typed = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a.b\n")
    assert "a.b" in imported(typed, type_only=True) and "a.b" not in imported(typed)
