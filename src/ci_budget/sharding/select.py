"""What `ci-budget run` runs, in order: registrations selected as sglang's `run_suite.py` does,
then sharded. Pure: paths given on the command line are resolved by the caller.

- a suite's registrations of one backend (`backend`, else the suite's only backend);
- `nightly=True` registrations only with `nightly` (and then only those), as `run_suite.py`;
- disabled registrations are reported as skipped, with their reason;
- a file registered twice in one suite runs twice, as sglang schedules each registration;
- a file in two of the selected suites runs once, under the suite that budgets it most.

Shard planning (last section): which selected files run in which shard, deterministic, so every
shard computes the same plan on its own. `lpt` is sglang's `auto_partition`: longest first (ties
by path) into the least-loaded shard (ties to the lowest index), so shard contents match sglang's
exactly. (A second, "best" planner went: on sglang's real suites it saved no shard and at most
7 % of a makespan; see docs/performance.md.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ci_budget.models import Registration
from ci_budget.registry.parse import unknown
from ci_budget.registry.specs import split_names


class SelectionError(ValueError):
    """Bad spec, unknown suite, ambiguous backend or empty selection: a usage error."""


@dataclass
class Job:
    path: str
    est_time: float
    suite: str | None = None
    backend: str | None = None
    selection: list[str] = field(default_factory=list)  # "::Class", "::Class::test"
    timeout: float | None = None  # per-file limit, seconds (the caller sets it)


@dataclass
class Skipped:
    path: str
    suite: str
    backend: str
    est_time: float
    reason: str


@dataclass
class Selection:
    jobs: list[Job] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """'path[::Class[::test]]' or sglang's 'path::Class.test' -> (path, '::Class::test').
    The path is returned as given; the names follow the `/rerun-test` rules."""
    path, sep, rest = spec.partition("::")
    if not path or (sep and not rest):
        raise SelectionError(f"spec {spec!r}: expected path[::Class[::test]]")
    if not sep:
        return path, None
    names = split_names(rest.split("::"))
    if isinstance(names, str):
        raise SelectionError(f"spec {spec!r}: {names}")
    return path, "::" + "::".join(names)


def suite_backend(registrations: Iterable[Registration], suite: str, backend: str | None) -> str:
    """The backend whose registrations of `suite` run: `backend`, else the suite's only one."""
    found = sorted({r.backend for r in registrations if r.suite == suite})
    if backend is not None:
        if backend not in found:
            raise SelectionError(
                f"suite {suite!r} has no {backend} registrations (it has: {', '.join(found)})"
            )
        return backend
    if len(found) > 1:
        raise SelectionError(
            f"suite {suite!r} is registered by {' and '.join(found)}: give "
            + " or ".join(f"--backend {b}" for b in found)
        )
    return found[0]


def suite_pool(
    registrations: list[Registration],
    suites: list[str],
    backend: str | None = None,
    nightly: bool = False,
) -> list[Registration]:
    """The registrations `run_suite.py --hw B --suite S [--nightly]` would consider."""
    known = {r.suite for r in registrations}
    for s in suites:
        if s not in known:
            raise SelectionError(unknown("suite", s, known))
    chosen = {s: suite_backend(registrations, s, backend) for s in suites}
    return [
        r
        for r in registrations
        if r.suite in chosen and r.backend == chosen[r.suite] and r.nightly == nightly
    ]


def _nothing(registrations, suites: list[str], specs: list[str], nightly: bool) -> str:
    """Why a selection is empty: a suite whose files are all of the other kind (nightly or
    per-commit) says so and names the flag."""
    other = [r for r in registrations if r.suite in suites and r.nightly != nightly]
    if other and not specs:
        count = len({r.file for r in other})
        if nightly:
            return (f"{', '.join(suites)}: no nightly=True registrations ({count} per-commit "
                    "file(s) are registered); drop --nightly to run them")  # fmt: skip
        return (f"{', '.join(suites)}: only nightly=True registrations ({count} file(s)); "
                "add --nightly to run them")  # fmt: skip
    return f"no registered files for {', '.join(suites + specs)}"


def _skipped(r: Registration) -> Skipped:
    return Skipped(r.file, r.suite, r.backend, r.est_time, r.disabled or "disabled")


def _by_suite(pool: list[Registration]) -> tuple[list[Job], list[Skipped]]:
    """One job per enabled registration; a file in several suites keeps the suite whose
    registration has the largest est_time (the first such, on ties)."""
    top: dict[str, Registration] = {}
    for r in pool:
        if r.enabled and (r.file not in top or r.est_time > top[r.file].est_time):
            top[r.file] = r
    jobs = [
        Job(r.file, r.est_time, r.suite, r.backend)
        for r in pool
        if r.enabled and r.suite == top[r.file].suite
    ]
    skipped = [_skipped(r) for r in pool if not r.enabled and r.file not in top]
    return jobs, skipped


def _by_spec(pool, spec_list, resolve, suites, extra=()) -> tuple[list[Job], list[Skipped]]:
    """One job per named file. A file named is run even when disabled (as sglang's rerun runs
    it); `extra` are unregistered files that may be named (`github.rerun-dirs`)."""
    by_file: dict[str, list[Registration]] = {}
    for r in pool:
        by_file.setdefault(r.file, []).append(r)
    extra = set() if suites else set(extra)
    wanted: dict[str, list[str | None]] = {}
    for spec in spec_list:
        raw, selector = parse_spec(spec)
        path = resolve(raw)
        if path not in by_file and path not in extra:
            where = f" in suite(s) {', '.join(suites)}" if suites else ""
            raise SelectionError(f"spec {spec!r}: {path} is not a registered test file{where}")
        sel = wanted.setdefault(path, [])
        if selector not in sel:
            sel.append(selector)  # None: the whole file
    jobs = []
    for path, selectors in wanted.items():
        selection = [] if None in selectors else [s for s in selectors if s is not None]
        if path not in by_file:
            jobs.append(Job(path, 0.0, None, None, selection))
            continue
        regs = [r for r in by_file[path] if r.enabled] or by_file[path]
        r = max(regs, key=lambda r: r.est_time)
        jobs.append(Job(path, r.est_time, r.suite, r.backend, selection))
    return jobs, []


def select_jobs(
    registrations: list[Registration],
    suites: Iterable[str] = (),
    specs: Iterable[str] = (),
    partition: tuple[int, int] | None = None,
    weights: Mapping[tuple[str, str], float] | None = None,
    *,
    backend: str | None = None,
    nightly: bool = False,
    resolve: Callable[[str], str] = lambda path: path,
    order: Mapping[str, int] | None = None,
    extra: Iterable[str] = (),
) -> Selection:
    """Jobs in run order and the disabled files. A shard's jobs in its planned order; without a
    partition, specs in the order given, suites in `order` (path -> rank: run_suite.py keeps
    the order its glob found the files in), else longest first. Shards split by `weights`
    ((file, suite) -> seconds) where known, else est_time; skipped files are reported by the
    first shard only. `extra`: unregistered files a spec may name (`github.rerun-dirs`)."""
    suites, specs = list(suites), list(specs)
    if not suites and not specs:
        raise SelectionError("nothing selected: give --suite SUITE or SPEC paths")
    if suites:
        pool = suite_pool(registrations, suites, backend, nightly)
    else:
        pool = [r for r in registrations if backend is None or r.backend == backend]
    if specs:
        jobs, skipped = _by_spec(pool, specs, resolve, suites, extra)
    else:
        jobs, skipped = _by_suite(pool)
    if not jobs and not skipped:
        raise SelectionError(_nothing(registrations, suites, specs, nightly))
    weights = weights or {}
    keyed = {f"{j.path}\0{i:06d}": j for i, j in enumerate(jobs)}
    items = [(k, weights.get((j.path, j.suite or ""), j.est_time)) for k, j in keyed.items()]
    if partition is None and specs:
        ranked = list(keyed)
    elif partition is None and order is not None:
        last = len(order)  # a file the glob did not find (another pattern's) goes after
        ranked = sorted(keyed, key=lambda k: order.get(keyed[k].path, last))  # stable
    elif partition is None:
        ranked = [k for k, _ in sorted(items, key=lambda kv: (-kv[1], kv[0]))]
    else:
        index, count = partition
        ranked = lpt(items, count)[index]
        if index != 0:
            skipped = []
    return Selection([keyed[k] for k in ranked], skipped)


# ==== Shard planning =========================================================================

EPS = 1e-9  # loads are sums of floats: a plan within this of the limit fits


def lpt(items: Sequence[tuple[str, float]], shards: int) -> list[list[str]]:
    """Split (key, seconds) items into `shards` lists, sglang-compatible."""
    if shards < 1:
        raise ValueError(f"shard count must be at least 1, not {shards}")
    plan: list[list[str]] = [[] for _ in range(shards)]
    loads = [0.0] * shards
    for key, seconds in sorted(items, key=lambda kv: (-kv[1], kv[0])):
        i = min(range(shards), key=loads.__getitem__)
        plan[i].append(key)
        loads[i] += seconds
    return plan


def parse_partition(text: str) -> tuple[int, int]:
    """'i/n' with 0 <= i < n (sglang's --auto-partition-id / --auto-partition-size)."""
    try:
        left, right = text.split("/")
        index, count = int(left), int(right)
    except ValueError:
        raise ValueError(f"partition must look like i/n (e.g. 0/4), not {text!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"partition {text!r}: need 0 <= i < n")
    return index, count


def makespan(plan: Sequence[Sequence[str]], weights: Mapping[str, float]) -> float:
    """The load of the most loaded shard."""
    return max((math.fsum(weights[key] for key in shard) for shard in plan), default=0.0)


def min_shards(
    items: Sequence[tuple[str, float]],
    timeout_s: float,
    safety: float = 0.75,
    max_shards: int = 64,
) -> int:
    """The fewest shards whose planned makespan fits in `timeout_s * safety`.

    Never more than sglang's rule, ceil(sum / (0.75 * timeout)) (capped by `max_shards`), or
    the same rule at `safety` when that is stricter than 0.75: when nothing fits (an item
    longer than the limit), that count is the answer.
    """
    if timeout_s <= 0:
        raise ValueError(f"timeout must be positive, not {timeout_s!r}")
    total = math.fsum(w for _, w in items)
    rule = max(1, min(max_shards, math.ceil(total / (min(0.75, safety) * timeout_s))))
    limit = timeout_s * safety
    if not items or max(w for _, w in items) > limit:
        return rule
    weights = {key: w for key, w in items}
    start = max(1, math.ceil(total / limit - EPS))
    for k in range(start, rule + 1):
        if makespan(lpt(items, k), weights) <= limit + EPS:
            return k
    return rule
