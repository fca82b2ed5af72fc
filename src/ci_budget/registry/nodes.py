"""AST node helpers for the registration scan: literal values, their source text, the
arguments a registration takes, and the `if __name__ == "__main__":` block. Pure.
"""

from __future__ import annotations

import ast

POSITIONAL = ("est_time", "suite", "nightly", "disabled")
KEYWORD_ONLY = ("stage", "runner_config", "in_process_group")
ALL_PARAMS = POSITIONAL + KEYWORD_ONLY
STRING_PARAMS = ("suite", "stage", "runner_config", "disabled", "in_process_group")


class NotLiteral(Exception):
    pass


def literal(node: ast.expr) -> object:
    """A literal constant, including a signed number (`-5` parses as a unary op)."""
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        value = node.operand.value
        return -value if isinstance(node.op, ast.USub) else value
    raise NotLiteral


def describe(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every parsed node
        return type(node).__name__


def is_main_block_with_call(stmt: ast.If) -> bool:
    test = stmt.test
    if not (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    ):
        return False
    return any(isinstance(n, ast.Call) for body in stmt.body for n in ast.walk(body))
