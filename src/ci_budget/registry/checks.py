"""Type and shape checks of a registration's literal arguments. Pure."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ci_budget.registry.nodes import STRING_PARAMS

MAX_EST_TIME = 1_000_000  # seconds, 11.6 days; sglang's largest is 4,800

if TYPE_CHECKING:
    from ci_budget.registry.parse import FileScan


def check_types(scan: FileScan, call: ast.Call, func: str, values: dict, nodes: dict) -> bool:
    """Whether a registration's literal arguments have the right types and shape; each problem
    goes to `scan` with its position."""
    ok = True
    if "est_time" not in nodes:
        scan.error(call, f"{func}(): est_time is required")
        ok = False
    elif "est_time" in values:
        est = values["est_time"]
        if isinstance(est, bool) or not isinstance(est, (int, float)):
            scan.error(
                nodes["est_time"],
                f"{func}(): est_time must be a number of seconds, not {est!r}",
            )
            ok = False
        elif est < 0:
            scan.error(nodes["est_time"], f"{func}(): est_time must be >= 0, not {est!r}")
            ok = False
        elif not est <= MAX_EST_TIME:  # 1e999 is inf; a huge int is no float: neither adds up
            text = repr(est) if len(repr(est)) <= 20 else repr(est)[:12] + "..."
            scan.error(
                nodes["est_time"],
                f"{func}(): est_time must be at most {MAX_EST_TIME:,} seconds, not {text}",
            )
            ok = False
        elif est == 0:
            scan.warn(
                nodes["est_time"],
                f"{func}(): est_time is 0: the file counts for nothing in its suite's "
                "budget and shard sizes",
            )
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
