"""What one side (sglang's scripts or ci-budget) decides for a checkout, in one comparable shape,
and the two compared field by field. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field

from ci_budget.render.blocks import aligned_text


@dataclass(frozen=True)
class Reg:
    file: str
    backend: str
    est_time: float
    stage: str | None
    runner_config: str | None
    suite: str | None
    nightly: bool
    disabled: str | None


FIELDS = ("backend", "est_time", "stage", "runner_config", "suite", "nightly", "disabled")


@dataclass
class SuiteView:
    size: int
    max_parallel: int
    runs_on: list[str]
    shards: list[list[str]] = field(default_factory=list)  # each shard's files, in run order


@dataclass
class View:
    registrations: list[Reg] = field(default_factory=list)
    suites: dict[str, SuiteView] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)  # what, sglang, ours, ok
    differences: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences


def _by_file(regs) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in regs:
        out.setdefault(r.file, []).append(r)
    return out


def compare_registrations(ref: View, ours: View, out: Comparison) -> None:
    theirs, mine = _by_file(ref.registrations), _by_file(ours.registrations)
    before = len(out.differences)
    for path in sorted(set(theirs) | set(mine)):
        a, b = theirs.get(path, []), mine.get(path, [])
        if len(a) != len(b):
            out.differences.append(
                f"{path}: sglang has {len(a)} registration(s), ci-budget {len(b)}"
            )
            continue
        for i, (x, y) in enumerate(zip(a, b, strict=True), 1):
            for name in FIELDS:
                if getattr(x, name) != getattr(y, name):
                    out.differences.append(
                        f"{path}: registration {i}: {name}: sglang {getattr(x, name)!r}, "
                        f"ci-budget {getattr(y, name)!r}"
                    )
    bad = len(out.differences) - before
    out.rows.append(("registrations", str(len(ref.registrations)), str(len(ours.registrations)),
                     "identical" if not bad else f"{bad} differences"))  # fmt: skip


def _suite_text(view: View, suite: str) -> str:
    s = view.suites.get(suite)
    if s is None:
        return "not dispatched"
    return f"{s.size} shards, max_parallel {s.max_parallel}, on {','.join(s.runs_on) or '?'}"


def compare_dispatch(ref: View, ours: View, out: Comparison) -> None:
    suites = sorted(set(ref.suites) | set(ours.suites))
    total = [sum(v.suites[s].size for s in v.suites) for v in (ref, ours)]
    for suite in suites:
        a, b = ref.suites.get(suite), ours.suites.get(suite)
        problems = []
        if a is None or b is None:
            problems.append("dispatched by one side only")
        else:
            for name in ("size", "max_parallel", "runs_on"):
                if getattr(a, name) != getattr(b, name):
                    problems.append(
                        f"{name}: sglang {getattr(a, name)!r}, ci-budget {getattr(b, name)!r}"
                    )
            for i, (x, y) in enumerate(zip(a.shards, b.shards, strict=False)):
                if x != y:
                    problems.append(
                        f"shard {i}: files differ (sglang {len(x)}, ci-budget {len(y)})"
                    )
        out.differences += [f"{suite}: {p}" for p in problems]
        ok = "identical, files in order" if not problems else f"{len(problems)} differences"
        out.rows.append((suite, _suite_text(ref, suite), _suite_text(ours, suite), ok))
    same = set(ref.suites) == set(ours.suites) and total[0] == total[1]
    out.rows.append(("run-ci dispatch", f"{len(ref.suites)} suites, {total[0]} shards",
                     f"{len(ours.suites)} suites, {total[1]} shards",
                     "identical" if same else "differs"))  # fmt: skip


def compare(ref: View, ours: View) -> Comparison:
    out = Comparison()
    compare_registrations(ref, ours, out)
    compare_dispatch(ref, ours, out)
    return out


def table(rows: list[tuple[str, str, str, str]]) -> str:
    head = ("check", "sglang's scripts", "ci-budget", "result")
    rule = ["-" * max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    return aligned_text([head, rule, *rows]).rstrip("\n")
