"""New est_time values from measured time, the in-place rewrite of the literal, and which
registrations sglang's est_time updater can rewrite. Pure.

The one suggestion rule, used by the report (this run's measured time) and by `ci-budget
suggest` (p90 of the passing runs in the history): `proposal` = seconds x (1 + margin), rounded
up to a multiple of `round_to`, offered only when it changes est_time by at least 30 s and at
least 30 % (sglang's rule against churn). The rewrite changes only the characters of the
est_time literal (found through the AST node's positions), so formatting and comments stay.

sglang's updater (`scripts/ci/update_est_time.py`) finds a suite's registration in a file by its
text, not its syntax: the first `register_cuda_ci(` or `register_cpu_ci(` (in that order)
written exactly as `register_X_ci(est_time=<digits>, suite="<suite>"` or
`register_X_ci(est_time=<digits>, stage="<stage>", runner_config="<rc>"` (whitespace only after
the commas). ci-budget finds registrations through the AST, so it also updates the ones written
any other way; the last section says which of those the updater would miss, and why.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ci_budget.config import Config, Thresholds
from ci_budget.models import Registration
from ci_budget.registry.parse import scan_source
from ci_budget.sharding.dispatch import PartitionModel

# ==== The suggestion rule and the rewrite =====================================================

if TYPE_CHECKING:  # a type only: reading budgets needs no history
    from ci_budget.history.model import History

MIN_DELTA_S = 30.0
MIN_DELTA_RATIO = 0.30


class Suggestion(BaseModel):
    file: str
    line: int
    suite: str
    backend: str
    est_time: float
    suggested: int | float
    p90: float  # the seconds it is based on: measured p90, or the model's est
    n: int  # passing runs measured (0 for a model's est)
    timeouts: int = 0
    timeout_lower_bound: float | None = None
    source: str = "history"  # or "model": the partition model's est, as sglang's updater
    updater: bool | None = None  # model: whether sglang's update_est_time.py makes it too
    updater_missed: str | None = None  # and if not, why its text match misses this call

    @property
    def delta(self) -> float:
        return self.suggested - self.est_time


class RewriteError(Exception):
    """The registration or its literal is not where the scan said; names file:line."""


def suggested_value(seconds: float, thresholds: Thresholds) -> int:
    """seconds x (1 + margin), rounded up to a multiple of `round_to`."""
    steps = seconds * (1 + thresholds.margin) / thresholds.round_to
    # round() first so 100 * 1.2 = 120.00000000000001 stays 120, not 130.
    return int(math.ceil(round(steps, 6))) * thresholds.round_to


def significant(old: float, new: float) -> bool:
    delta = abs(new - old)
    return delta >= MIN_DELTA_S and delta >= MIN_DELTA_RATIO * old


def proposal(
    est_time: float, seconds: float, thresholds: Thresholds, any_size: bool = False
) -> int | None:
    """The est_time to suggest for a file that takes `seconds`, or None when the change would
    be below 30 s or 30 % of `est_time` (unless `any_size`) or would raise a budget the runs
    already fit in (only rounding up would)."""
    new = suggested_value(seconds, thresholds)
    if seconds <= est_time < new:
        return None
    if not any_size and not significant(est_time, new):
        return None
    return new


def suggest(
    registrations: Iterable[Registration],
    history: History,
    thresholds: Thresholds,
    min_samples: int = 1,
    include_all: bool = False,
) -> list[Suggestion]:
    """Suggestions for registrations with enough passing samples in their suite; only the
    significant ones unless `include_all`."""
    out = []
    for reg in registrations:
        stats = history.stats(reg.file, reg.suite)
        if stats.p90 is None or stats.n < min_samples:
            continue
        new = proposal(reg.est_time, stats.p90, thresholds, any_size=include_all)
        if new is None:
            continue
        out.append(
            Suggestion(
                file=reg.file,
                line=reg.line,
                suite=reg.suite,
                backend=reg.backend,
                est_time=reg.est_time,
                suggested=new,
                p90=stats.p90,
                n=stats.n,
                timeouts=stats.timeouts,
                timeout_lower_bound=stats.timeout_lower_bound,
            )
        )
    return sorted(out, key=lambda s: (s.file, s.line, s.suite))


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(text: str, starts: list[int], line: int, col_bytes: int) -> int:
    """AST columns count UTF-8 bytes; turn (line, byte column) into a str index."""
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    prefix = text[start:end].encode("utf-8")[:col_bytes].decode("utf-8")
    return start + len(prefix)


def _literal_text(node: ast.expr, value: float) -> str:
    """`value` written as the literal it replaces is: 120 over 90, 120.0 over 90.0; a value
    with a fraction as it is (120.5)."""
    old = getattr(node.operand if isinstance(node, ast.UnaryOp) else node, "value", 0)
    if isinstance(value, float) and not value.is_integer():
        return repr(value)
    return f"{int(value)}.0" if isinstance(old, float) else str(int(value))


def locate(source: str, rel: str, reg: Registration) -> tuple[ast.Call, int, int]:
    """The registration's call and the [begin, end) of its est_time literal in `source`."""
    tree = ast.parse(source, filename=rel)
    call = next(
        (
            stmt.value
            for stmt in tree.body
            if isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and stmt.value.lineno == reg.line
            and stmt.value.col_offset + 1 == reg.col
        ),
        None,
    )
    if call is None:
        raise RewriteError(f"{rel}:{reg.line}: registration call not found")
    node = call.args[0] if call.args else None
    if node is None:
        node = next(kw.value for kw in call.keywords if kw.arg == "est_time")
    assert node.end_lineno is not None and node.end_col_offset is not None  # set by ast.parse
    starts = _line_starts(source)
    begin = _offset(source, starts, node.lineno, node.col_offset)
    end = _offset(source, starts, node.end_lineno, node.end_col_offset)
    return call, begin, end


def rewrite_est_time(
    source: str, rel: str, suite: str, backend: str, new_value: float, config: Config
) -> str:
    """`source` with the est_time literal of the (suite, backend) registration set to
    `new_value`. Everything else, byte for byte, is kept."""
    scan = scan_source(source, rel, config)
    matches = [r for r in scan.registrations if r.suite == suite and r.backend == backend]
    if not matches:
        raise RewriteError(f"{rel}: no {backend} registration for suite {suite!r}")
    if len(matches) > 1:
        lines = ", ".join(str(r.line) for r in matches)
        raise RewriteError(f"{rel}: several registrations for suite {suite!r} (lines {lines})")
    call, begin, end = locate(source, rel, matches[0])
    node = (
        call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "est_time")
    )
    return source[:begin] + _literal_text(node, new_value) + source[end:]


def from_model(
    registrations: Iterable[Registration],
    model: PartitionModel,
    read: Callable[[str], str | None],
    include_all: bool = False,
) -> list[Suggestion]:
    """What sglang's updater writes from the model (every literal that differs from the
    model's est becomes that est, as it is written there), for the backends the model
    measures; each says whether the updater itself finds that registration. Only changes past
    the 30 s / 30 % rule unless `include_all`."""
    out = []
    for reg in registrations:
        new = model.raw_est.get(reg.suite, {}).get(reg.file)
        if new is None or reg.backend not in BACKENDS or new == reg.est_time:
            continue
        if not include_all and not significant(reg.est_time, new):
            continue
        found, why = _updater_finds(reg, read(reg.file))
        out.append(
            Suggestion(
                file=reg.file,
                line=reg.line,
                suite=reg.suite,
                backend=reg.backend,
                est_time=reg.est_time,
                suggested=new,
                p90=float(new),
                n=0,
                source="model",
                updater=found,
                updater_missed=why,
            )  # fmt: skip
        )
    return sorted(out, key=lambda s: (s.file, s.line, s.suite))


def mark_updater(found: list[Suggestion], registrations, read: Callable[[str], str | None]) -> None:
    """Say of each suggestion whether sglang's update_est_time.py text match would find its
    registration (and why not), as `from_model` does for the model's."""
    regs = {(r.file, r.suite, r.line): r for r in registrations}
    for s in found:
        reg = regs.get((s.file, s.suite, s.line))
        if reg is not None:
            s.updater, s.updater_missed = _updater_finds(reg, read(reg.file))


def _updater_finds(reg: Registration, text: str | None) -> tuple[bool, str | None]:
    if text is None:
        return False, "the file could not be read"
    try:
        call, begin, _ = locate(text, reg.file, reg)
    except (RewriteError, SyntaxError) as exc:
        return False, str(exc)
    reads = updater_reads(text, reg.suite)
    if reads == begin:
        return True, None
    if reads is not None:
        line = text.count("\n", 0, reads) + 1
        return False, f"it reads the literal on line {line} for this suite instead"
    segment = ast.get_source_segment(text, call) or ""
    return False, missed_because(call, segment)


# ==== What sglang's updater can rewrite =======================================================

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
