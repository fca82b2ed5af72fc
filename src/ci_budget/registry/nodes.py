"""AST node helpers for the registration scan: literal values, their source text, the
arguments a registration takes and their type checks, and the `if __name__ == "__main__":`
block. Pure.
"""

from __future__ import annotations

import ast

POSITIONAL = ("est_time", "suite", "nightly", "disabled")
STRING_PARAMS = ("suite", "stage", "runner_config", "disabled", "in_process_group")
MAX_EST_TIME = 1_000_000  # seconds, 11.6 days; sglang's largest is 4,800


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


def check_types(scan, call: ast.Call, func: str, values: dict, nodes: dict) -> bool:
    """Whether a registration's literal arguments have the right types and shape; each problem
    goes to `scan` (its `error` and `warn`) with its position."""
    ok = _check_est_time(scan, call, func, values, nodes)
    for name in STRING_PARAMS:
        if name in values and not isinstance(values[name], str):
            scan.error(nodes[name], f"{func}(): {name} must be a string, not {values[name]!r}")
            ok = False
    if "nightly" in values and not isinstance(values["nightly"], bool):
        scan.error(
            nodes["nightly"],
            f"{func}(): nightly must be True or False, not {values['nightly']!r}",
        )
        ok = False
    has_stage, has_runner, has_suite = (
        "stage" in nodes,
        "runner_config" in nodes,
        "suite" in nodes,
    )
    if not (
        (has_stage and has_runner and not has_suite)
        or (not has_stage and not has_runner and has_suite)
    ):
        given = [
            n
            for n, present in (
                ("stage", has_stage),
                ("runner_config", has_runner),
                ("suite", has_suite),
            )
            if present
        ]
        scan.error(
            call,
            f"{func}(): give exactly one of (stage= and runner_config=) or suite; "
            f"got {', '.join(given) if given else 'none of them'}",
        )
        ok = False
    return ok


def _check_est_time(scan, call: ast.Call, func: str, values: dict, nodes: dict) -> bool:
    if "est_time" not in nodes:
        scan.error(call, f"{func}(): est_time is required")
        return False
    if "est_time" not in values:
        return True
    est = values["est_time"]
    if isinstance(est, bool) or not isinstance(est, (int, float)):
        scan.error(
            nodes["est_time"], f"{func}(): est_time must be a number of seconds, not {est!r}"
        )
        return False
    if est < 0:
        scan.error(nodes["est_time"], f"{func}(): est_time must be >= 0, not {est!r}")
        return False
    if not est <= MAX_EST_TIME:  # 1e999 is inf; a huge int is no float: neither adds up
        text = repr(est) if len(repr(est)) <= 20 else repr(est)[:12] + "..."
        scan.error(
            nodes["est_time"],
            f"{func}(): est_time must be at most {MAX_EST_TIME:,} seconds, not {text}",
        )
        return False
    if est == 0:
        scan.warn(
            nodes["est_time"],
            f"{func}(): est_time is 0: the file counts for nothing in its suite's "
            "budget and shard sizes",
        )
    return True
