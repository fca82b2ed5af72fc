"""Which registrations sglang's est_time updater (`scripts/ci/update_est_time.py`) can rewrite.
Pure.

That updater finds a suite's registration in a file by its text, not its syntax: the first
`register_cuda_ci(` or `register_cpu_ci(` (in that order) written exactly as
`register_X_ci(est_time=<digits>, suite="<suite>"` or
`register_X_ci(est_time=<digits>, stage="<stage>", runner_config="<rc>"` (whitespace only after
the commas). ci-budget finds registrations through the AST, so it also updates the ones written
any other way; this module says which of those the updater would miss, and why.
"""

from __future__ import annotations

import ast
import re

BACKENDS = ("cuda", "cpu")  # the ones sglang-ci-stats measures and the updater rewrites


def _forms(suite: str) -> list[re.Pattern]:
    stage, sep, runner = suite.partition("-test-")
    tails = [rf',\s*suite="{re.escape(suite)}"']
    if sep:
        tails.append(rf',\s*stage="{re.escape(stage)}",\s*runner_config="{re.escape(runner)}"')
    return [
        re.compile(rf"register_{backend}_ci\(est_time=(\d+){tail}")
        for backend in BACKENDS
        for tail in tails
    ]


def updater_reads(text: str, suite: str) -> int | None:
    """The offset in `text` of the est_time digits the updater would read for `suite` (the
    first form that matches anywhere in the file wins), or None when it finds none."""
    for form in _forms(suite):
        found = form.search(text)
        if found is not None:
            return found.start(1)
    return None


def missed_because(call: ast.Call, segment: str) -> str:
    """Why a registration call is not in the updater's form (a plain reason for the user)."""
    name = getattr(call.func, "id", None) or getattr(call.func, "attr", "")
    if name not in {f"register_{b}_ci" for b in BACKENDS}:
        return f"{name}() is not a call it rewrites (register_cuda_ci / register_cpu_ci)"
    est = call.args[0] if call.args else None
    if est is not None:
        return "est_time is positional, not written `est_time=`"
    keyword = next((k for k in call.keywords if k.arg == "est_time"), None)
    if keyword is None or call.keywords[0] is not keyword:
        return "est_time is not the call's first argument"
    if not segment.startswith(f"{name}(est_time="):
        return "the call is split across lines or spaced (`(est_time=` is not written together)"
    value = keyword.value
    if not (isinstance(value, ast.Constant) and type(value.value) is int):
        return "est_time is not a plain integer literal"
    return "suite=, or stage= then runner_config=, does not follow est_time as it expects"
