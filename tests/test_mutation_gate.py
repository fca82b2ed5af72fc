"""The mutation gate's own rules (scripts/mutation_score.py): every function it gates exists,
its name patterns select exactly that function's mutants, and the message-text exclusion only
forgives sentences. A renamed gating function must fail here, not drop out of the gate."""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutation_score", REPO / "scripts/mutation_score.py")
score = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(score)


def defined(module: str) -> set[str]:
    """Top-level functions and `Class.method` names of a module under src/."""
    path = REPO / "src" / (module.replace(".", "/") + ".py")
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{f.name}" for f in node.body if isinstance(f, ast.FunctionDef)}
    return names


@pytest.mark.parametrize("module", sorted(score.GATES))
def test_every_gated_function_exists_and_is_mutated(module):
    assert score.GATES[module] <= defined(module)
    mutated = REPO / "src" / (module.replace(".", "/") + ".py")
    text = (REPO / "pyproject.toml").read_text()
    assert f'"{mutated.relative_to(REPO).as_posix()}"' in text


def test_patterns_pick_each_gated_functions_mutants_and_no_others():
    patterns = score.gate_patterns()
    names = {
        "ci_budget.trigger.decide.x__pull_request__mutmut_159": True,
        "ci_budget.trigger.decide.x__pull_request_extra__mutmut_1": False,
        "ci_budget.trigger.decide.x_decide__mutmut_3": True,
        "ci_budget.registry.lookup.x\u01c1Registry\u01c1expand__mutmut_4": True,
        "ci_budget.registry.lookup.x\u01c1Registry\u01c1disabled__mutmut_1": False,
        "ci_budget.budget.status.x_attach_numbers__mutmut_12": False,
    }
    for name, gated in names.items():
        assert any(fnmatch.fnmatchcase(name, p) for p in patterns) is gated, name
        assert score.is_gate(name) is gated, name
    assert len(patterns) == sum(len(f) for f in score.GATES.values())


def test_only_sentences_are_forgiven_as_message_text():
    sentence = '-    why = "a has no permission"\n+    why = "XXa has no permissionXX"\n'
    word = '-    status = "over"\n+    status = "XXoverXX"\n'
    code = "-    x = a < b\n+    x = a <= b\n"
    assert score.message_only(sentence)
    assert not score.message_only(word)
    assert not score.message_only(code)
