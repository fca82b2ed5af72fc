"""The mutation-test selection names what exists: `[tool.mutmut]`'s mutated files and selected
tests, and the functions `scripts/mutation_score.py` holds to no survivor at all (`GATES`): a
stale name there would silently gate nothing."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _mutmut() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def _gates() -> dict[str, set[str]]:
    tree = ast.parse((ROOT / "scripts" / "mutation_score.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "GATES" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError("scripts/mutation_score.py defines no GATES")


def defined(source: str) -> set[str]:
    """The functions a module defines, as mutmut names them: `f` and `Class.method`."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}.{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return names


def test_defined_sees_functions_and_methods_not_imported_names():
    source = "from m import f as _f\nclass C:\n    def m(self): ...\ndef g(): ...\nX = 1\n"
    assert defined(source) == {"C.m", "g"}


def test_the_mutated_files_and_the_selected_tests_exist():
    config = _mutmut()
    missing = [
        rel
        for rel in config["only_mutate"] + config["pytest_add_cli_args_test_selection"]
        if not (ROOT / rel).is_file()
    ]
    assert missing == []


def test_every_gating_function_is_defined_in_a_mutated_module():
    mutated = {
        rel.removeprefix("src/").removesuffix(".py").replace("/", ".")
        for rel in _mutmut()["only_mutate"]
    }
    stale = {}
    for module, names in _gates().items():
        assert module in mutated, module
        path = ROOT / "src" / (module.replace(".", "/") + ".py")
        if gone := names - defined(path.read_text(encoding="utf-8")):
            stale[module] = sorted(gone)
    assert stale == {}
