"""The budget watch: what is eating a suite's headroom, since which commits, and when it runs
out. Pure: a `History` and the checkout's facts in, findings out.

- Per suite: the slowest shard's wall in each run (job walls of run files), its sustained steps,
  its Theil–Sen slope since the last step with Sen's 95 % interval ("no trend" when the interval
  holds 0), the headroom against the suite's timeout now (median of the last three runs), and
  when the trend crosses it.
- Per (file, suite): sustained steps in measured time (>= 20 % and >= 30 s, the runs after it
  staying there), with the last run before and the first after, attributed to the commits
  between those runs' head_shas that touched the file, a module it imports, or CI.
- Steps of several files at one run boundary are one event (a runner, image or dependency
  change), with the commits of that range that touched CI, requirements or images.
- Per registration: est_time against measured p90 (under, over, stale).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ci_budget.history.model import History, Sample, percentile

STEP_SHARE = 0.20  # a step: at least this share of the level before it
STEP_SECONDS = 30.0  # and at least this many seconds
WINDOW = 5  # runs either side a step's levels are taken over
MIN_BEFORE = 3  # runs before a step
MIN_AFTER = 3  # runs after it, staying there
HOLDING = 0.75  # share of the runs either side (up to HOLD_SPAN) on their side of the midpoint
HOLD_SPAN = 10  # runs either side a step must hold over: it stays there
EVENT_FILES = 3  # steps at one run boundary that make an event
RISK_SHARE = 0.20  # a suite at risk: headroom below this share of its timeout,
RISK_DAYS = 30.0  # or the trend crossing it within this many days (earliest)
LEVEL_RUNS = 3  # runs the suite's level now is the median of
Z95 = 1.959964
CI_PATHS = (".github/", "docker/", "requirements", "pyproject.toml", "setup.py", "Dockerfile",
            "scripts/ci/", "run_suite.py", "ci_install", "ci_utils.py")  # fmt: skip


@dataclass(frozen=True)
class RunRef:
    run: str  # run id (sglang-ci-stats) or results hash
    date: datetime | None
    sha: str | None


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    paths: tuple[str, ...] = ()


@dataclass
class Trend:
    slope: float  # seconds per day (Theil–Sen)
    low: float  # Sen's 95 % interval
    high: float

    @property
    def rising(self) -> bool:
        return self.low > 0

    @property
    def falling(self) -> bool:
        return self.high < 0


@dataclass
class SuiteWatch:
    suite: str
    timeout: float
    walls: list[tuple[RunRef, float]]  # (run, slowest shard's wall), oldest first
    level: float | None = None  # median of the last LEVEL_RUNS walls
    trend: Trend | None = None
    crossing: tuple[float, float | None] | None = None  # days from the last run: earliest, latest
    steps: list[Step] = field(default_factory=list)  # sustained steps of the slowest shard's wall

    @property
    def headroom(self) -> float | None:
        return None if self.level is None else self.timeout - self.level

    @property
    def at_risk(self) -> bool:
        if self.headroom is None:
            return False
        if self.headroom < RISK_SHARE * self.timeout:
            return True
        return self.crossing is not None and self.crossing[0] <= RISK_DAYS


@dataclass
class Step:
    file: str
    suite: str
    before: float  # median of up to WINDOW runs before
    after: float  # median of up to WINDOW runs after
    last_before: RunRef
    first_after: RunRef
    commits: list[Commit] = field(default_factory=list)  # of the range, narrowed
    reasons: dict[str, list[str]] = field(default_factory=dict)  # sha -> "file"/"imports"/"ci"
    range_size: int | None = None  # commits in the whole range (None: not read)
    event: int | None = None  # index of its Event

    @property
    def delta(self) -> float:
        return self.after - self.before

    @property
    def boundary(self) -> tuple[str, str]:
        return (self.last_before.run, self.first_after.run)


@dataclass
class Event:
    last_before: RunRef
    first_after: RunRef
    steps: list[Step]
    commits: list[Commit] = field(default_factory=list)  # CI, requirements, images


@dataclass
class EstCheck:
    file: str
    suite: str
    line: int
    est_time: float
    p90: float
    n: int
    verdict: str  # "under", "over", "stale"


@dataclass
class Watch:
    suites: list[SuiteWatch]
    steps: list[Step]
    events: list[Event]
    estimates: list[EstCheck]


# --- trend -------------------------------------------------------------------------------


def theil_sen(xs: list[float], ys: list[float]) -> Trend | None:
    """Slope (median of pairwise slopes) with Sen's 95 % interval; None under 4 points."""
    n = len(xs)
    if n < 4:
        return None
    slopes = sorted(
        (ys[j] - ys[i]) / (xs[j] - xs[i])
        for i in range(n) for j in range(i + 1, n) if xs[j] != xs[i]
    )  # fmt: skip
    if not slopes:
        return None
    count = len(slopes)
    spread = Z95 * math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    lo = max(0, math.floor((count - spread) / 2))
    hi = min(count - 1, math.ceil((count + spread) / 2))
    mid = percentile(slopes, 50)
    return None if mid is None else Trend(slope=mid, low=slopes[lo], high=slopes[hi])


def _run_id(key: str) -> str:
    """`ci-stats:<run>:<job>:<attempt>` -> `<run>`; any other run key is itself."""
    parts = key.split(":")
    return parts[1] if len(parts) == 4 and parts[0] == "ci-stats" else key


def _days(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds() / 86400.0


def suite_walls(history: History, suite: str, shas: Mapping[str, str | None]):
    """(run, slowest shard's wall) per run of `suite`, oldest first."""
    slowest: dict[str, tuple[datetime | None, float]] = {}
    for job in history.jobs.get(suite, []):
        run = _run_id(job.run)
        date, wall = slowest.get(run, (job.date, 0.0))
        slowest[run] = (max(filter(None, (date, job.date)), default=None), max(wall, job.wall))
    rows = [(RunRef(run, date, shas.get(run)), wall) for run, (date, wall) in slowest.items()]
    return sorted(rows, key=lambda r: (r[0].date is None, r[0].date or datetime.min, r[0].run))


def watch_suite(suite: str, timeout: float, walls: list[tuple[RunRef, float]]) -> SuiteWatch:
    """The suite's level, steps, and trend; the trend is taken over the runs since its last
    step (a step is not a drift: across one, Theil-Sen would read the jump as a slope)."""
    out = SuiteWatch(suite, timeout, walls)
    if not walls:
        return out
    out.level = percentile([w for _, w in walls[-LEVEL_RUNS:]], 50)
    out.steps = find_steps("", suite, walls)
    since = walls
    if out.steps:
        first = [r.run for r, _ in walls].index(out.steps[-1].first_after.run)
        since = walls[first:]
    dated = [(r.date, w) for r, w in since if r.date is not None]
    if len(dated) < 4:
        return out
    first_date = dated[0][0]
    out.trend = theil_sen([_days(first_date, d) for d, _ in dated], [w for _, w in dated])
    if out.trend and out.trend.rising and out.headroom is not None:
        room = max(0.0, out.headroom)
        out.crossing = (room / out.trend.high, room / out.trend.low)
    return out


# --- steps ---------------------------------------------------------------------------------


def series_runs(samples: list[Sample]) -> list[tuple[RunRef, float]]:
    """One passing measurement per run (the last), oldest first."""
    out: dict[str, tuple[RunRef, float]] = {}
    for s in samples:
        if s.status == "passed":
            run = _run_id(s.run)
            out[run] = (RunRef(run, s.date, s.commit), s.elapsed)
    return list(out.values())


def _holds(values: list[float], mid: float, above: bool) -> bool:
    on_side = sum(1 for v in values if (v > mid) == above)
    return on_side >= HOLDING * len(values)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def find_steps(file: str, suite: str, runs: list[tuple[RunRef, float]]) -> list[Step]:
    """Sustained steps: the medians of the WINDOW runs either side differ by >= STEP_SHARE and
    >= STEP_SECONDS, the run before is on the old side of their midpoint and the run after on
    the new, and HOLDING of the runs either side (up to HOLD_SPAN) stay on their side."""
    found: list[Step] = []
    values = [v for _, v in runs]
    k = MIN_BEFORE
    while k <= len(runs) - MIN_AFTER:
        b = median(values[max(0, k - WINDOW) : k])
        a = median(values[k : k + WINDOW])
        mid = (a + b) / 2
        up = a > b
        big = abs(a - b) >= max(STEP_SHARE * b, STEP_SECONDS)
        edge = (values[k - 1] > mid) != up and (values[k] > mid) == up
        before = values[max(0, k - HOLD_SPAN) : k]
        after = values[k : k + HOLD_SPAN]
        if big and edge and _holds(before, mid, not up) and _holds(after, mid, up):
            found.append(Step(file, suite, b, a, runs[k - 1][0], runs[k][0]))
            k += MIN_AFTER
            continue
        k += 1
    return found


# --- attribution ---------------------------------------------------------------------------


def imported_modules(source: str) -> set[str]:
    """Dotted modules a test file imports (two segments or more: a bare top-level package
    would name everything in it)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    return {m for m in out if "." in m}


def _dotted(path: str) -> str:
    stem = path.removesuffix(".py").removesuffix("/__init__")
    return "." + stem.replace("/", ".")


def touches_import(path: str, modules: set[str]) -> bool:
    """`path` is one of `modules`' files, or under one of their packages."""
    dotted = _dotted(path) + "."
    return path.endswith(".py") and any(f".{m}." in dotted for m in modules)


def is_ci_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(path.startswith(p) or p in path for p in CI_PATHS) or name.startswith("Dockerfile")


def why(commit: Commit, file: str, modules: set[str]) -> list[str]:
    """How a commit bears on a file: it touched the file, an import of it, or CI."""
    out = []
    if file in commit.paths:
        out.append("file")
    if any(touches_import(p, modules) for p in commit.paths):
        out.append("imports")
    if any(is_ci_path(p) for p in commit.paths):
        out.append("ci")
    return out


RangeLog = Callable[[str, str], "list[Commit] | None"]


def attribute(steps: list[Step], log: RangeLog, imports: Mapping[str, set[str]]) -> None:
    """Each step's commits: those of its range that touched the file, an import, or CI."""
    for step in steps:
        a, b = step.last_before.sha, step.first_after.sha
        commits = log(a, b) if a and b else None
        if commits is None:
            continue
        step.range_size = len(commits)
        mods = imports.get(step.file, set())
        step.reasons = {c.sha: r for c in commits if (r := why(c, step.file, mods))}
        step.commits = [c for c in commits if c.sha in step.reasons]


def group_events(steps: list[Step], log: RangeLog, least: int = EVENT_FILES) -> list[Event]:
    """Steps sharing one run boundary, `least` of them or more, as one event each."""
    by: dict[tuple[str, str], list[Step]] = {}
    for step in steps:
        by.setdefault(step.boundary, []).append(step)
    events = []
    for group in by.values():
        if len(group) < least:
            continue
        first = group[0]
        a, b = first.last_before.sha, first.first_after.sha
        commits = (log(a, b) if a and b else None) or []
        ci = [c for c in commits if any(is_ci_path(p) for p in c.paths)]
        events.append(Event(first.last_before, first.first_after, group, ci))
    events.sort(key=lambda e: -len(e.steps))
    for i, event in enumerate(events):
        for s in event.steps:
            s.event = i
    return events


# --- est_time against measured --------------------------------------------------------------


def check_estimates(regs, history: History, steps: list[Step], least: int = 5) -> list[EstCheck]:
    """Registrations whose est_time is off their p90 by >= STEP_SHARE and >= STEP_SECONDS:
    `under` (p90 above it), `over`, or `stale` (it matched the level before the file's last
    step). The p90 is over the runs since that step (MIN_AFTER of them suffice), else over all
    kept runs (`least` of them)."""
    last_step = {(s.file, s.suite): s for s in steps}
    out = []
    for reg in regs:
        if not reg.enabled or reg.nightly:
            continue
        runs = series_runs(history.samples(reg.file, reg.suite))
        step = last_step.get((reg.file, reg.suite))
        if step is not None:
            runs = runs[[r.run for r, _ in runs].index(step.first_after.run) :]
        values = [v for _, v in runs]
        if len(values) < (MIN_AFTER if step else least):
            continue
        p90, est = percentile(values, 90), reg.est_time
        if p90 is None or abs(p90 - est) < max(STEP_SHARE * max(p90, est), STEP_SECONDS):
            continue
        stale = step is not None and abs(step.before - est) <= STEP_SHARE * step.before
        verdict = "stale" if stale else "under" if p90 > est else "over"
        out.append(EstCheck(reg.file, reg.suite, reg.line, est, p90, len(values), verdict))
    return sorted(out, key=lambda c: -abs(c.p90 - c.est_time))


def watch(
    history: History,
    timeouts: Mapping[str, float],
    regs=(),
    log: RangeLog = lambda a, b: None,
    imports: Mapping[str, set[str]] | None = None,
    only: set[str] | None = None,
) -> Watch:
    """Everything the watch reports; `timeouts`: suite -> seconds (suites without one are
    not watched for headroom); `only`: these suites (default: all)."""
    shas = {}
    steps: list[Step] = []
    for file, suite in history.keys():
        if only and suite not in only:
            continue
        runs = series_runs(history.samples(file, suite))
        shas.update({r.run: r.sha for r, _ in runs if r.sha})
        steps.extend(find_steps(file, suite, runs))
    suites = [
        watch_suite(suite, timeouts[suite], suite_walls(history, suite, shas))
        for suite in sorted(history.jobs)
        if suite in timeouts and (not only or suite in only)
    ]
    attribute(steps, log, imports or {})
    attribute([step for suite in suites for step in suite.steps], log, {})
    events = group_events(steps, log)
    steps.sort(key=lambda s: (s.first_after.date is None, s.first_after.date or datetime.min))
    regs = [r for r in regs if not only or r.suite in only]
    return Watch(suites, steps, events, check_estimates(regs, history, steps))
