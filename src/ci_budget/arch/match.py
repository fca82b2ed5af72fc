"""Which table row a test measures, and the value it measured. Pure.

The rule (docs/arch-tables.md):
1. A test that records `kl_case` (`record_property("kl_case", "#34184 multiturn branching")`)
   measures the row with that label, or that group and label.
2. A mapping (`arch.rows` in the config: row label -> `Class::test` or `path::Class::test`)
   names the test of a row whose label the rule cannot give.
3. Otherwise the row label is the test's method name, prefixed with the words its class name
   adds to another test class of the file: `TestUnifiedHybridLazyBitExact` adds `Lazy` to
   `TestUnifiedHybridBitExact`, so its `test_prefill_cache_hit` measures
   `lazy test_prefill_cache_hit`. Labels compare case-insensitively, spaces collapsed.

A test's value is its `record_property` value (`avg_kl_div`), else the last value it printed
that matches the value pattern. Nothing is guessed: a value that matches no row, a row that two
tests claim, and (when asked) a value whose rows sit under several fixes are listed instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_budget.arch.layout import normalize_arch
from ci_budget.models import ArchRow, FileResult, Problem, RunResults
from ci_budget.results.phases import class_of, same_file, split_nodeid
from ci_budget.results.printed import DEFAULT_PATTERN, last_value, value_regex

CASE_PROPERTY = "kl_case"  # record_property("kl_case", "<row label>") names a row explicitly
VALUE_PROPERTY = "avg_kl_div"
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def class_words(name: str) -> list[str]:
    """`TestUnifiedHybridLazyBitExact` -> test unified hybrid lazy bit exact."""
    return [w.lower() for w in _CAMEL.findall(name)]


def _rest(words: list[str], base: list[str]) -> list[str] | None:
    """`words` less `base` when base's words appear in order within words; else None."""
    rest, k = [], 0
    for w in words:
        if k < len(base) and w == base[k]:
            k += 1
        else:
            rest.append(w)
    return rest if k == len(base) else None


def added_words(cls: str, classes: set[str]) -> list[str]:
    """The words `cls` adds to the closest other class whose name it extends."""
    mine = class_words(cls)
    best: list[str] | None = None
    for other in sorted(classes - {cls}):
        rest = _rest(mine, class_words(other))
        if rest and (best is None or len(rest) < len(best)):
            best = rest
    return best or []


def rule_label(nodeid: str, classes: set[str]) -> str:
    _, _, test = split_nodeid(nodeid)
    cls = class_of(nodeid)
    added = added_words(cls, classes) if cls else []
    return _norm(" ".join([*added, test]))


def _mapped(nodeid: str, mapping: dict[str, str]) -> list[str]:
    """Row labels the mapping gives this test: `Class::test` matches the node id's tail,
    `path::Class::test` the file too."""
    path, _, test = split_nodeid(nodeid)
    tail = [p for p in (class_of(nodeid), test) if p]
    out = []
    for label, target in mapping.items():
        want = target.split("::")
        if len(want) == 3 and not same_file(want[0], path):
            continue
        if want[-2:] == tail[-len(want[-2:]) :]:
            out.append(_norm(label))
    return out


def match_row(
    rows: list[ArchRow],
    nodeid: str,
    case: str | None = None,
    classes: set[str] | None = None,
    mapping: dict[str, str] | None = None,
) -> list[ArchRow]:
    """Rows a test measures, by the rule above (several when a label sits under several fixes)."""
    if case is not None:
        want = _norm(case)
        return [r for r in rows if want in (_norm(r.case), _norm(f"{r.group or ''} {r.case}"))]
    labels = _mapped(nodeid, mapping or {})
    if not labels:
        cls = class_of(nodeid)
        known = set(classes or ()) | ({cls} if cls else set())
        labels = [rule_label(nodeid, known)]
    return [r for r in rows if _norm(r.case) in labels]


# ---- measured values from runs --------------------------------------------------------


@dataclass
class Measurement:
    file: str
    nodeid: str
    value: float
    case: str | None = None  # the kl_case property


@dataclass
class Matching:
    """What a run's values did: filled rows, and everything left out, with why."""

    filled: list[tuple[ArchRow, Measurement]] = field(default_factory=list)
    unmatched: list[Measurement] = field(default_factory=list)  # no row
    claimed_twice: list[tuple[ArchRow, list[Measurement]]] = field(default_factory=list)
    several_fixes: list[tuple[Measurement, list[str]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def measurements(f: FileResult, key: str, rx: re.Pattern, problems: list[Problem]):
    """One Measurement per test of a file: record_property value, else the last printed one."""
    cases = {t.nodeid: t for c in f.classes for t in c.test_cases}
    out = []
    for nodeid in [*cases, *(n for n in f.printed if n not in cases)]:
        props = cases[nodeid].user_properties if nodeid in cases else {}
        case = props.get(CASE_PROPERTY)
        if key in props:
            try:
                out.append(Measurement(f.path, nodeid, float(props[key]), case))
            except (TypeError, ValueError):
                problems.append(Problem(file=f.path, message=f"{nodeid}: {key} is not a number"))
            continue
        value = last_value(f.printed.get(nodeid, ()), rx)
        if value is not None:
            out.append(Measurement(f.path, nodeid, value, case))
    return out


def _run_arch(res: RunResults, arch: str | None, amap) -> str | None:
    gpu = res.meta.gpu
    return normalize_arch(arch or (gpu.arch if gpu else "") or "", amap)


def attach_measured(
    rows: list[ArchRow],
    results: list[RunResults],
    arch: str | None = None,
    key: str = VALUE_PROPERTY,
    problems: list[Problem] | None = None,
    arch_map: dict[str, str] | None = None,
    *,
    pattern: str = DEFAULT_PATTERN,
    mapping: dict[str, str] | None = None,
    classes: dict[str, set[str]] | None = None,
    group: str | None = None,
    one_fix: bool = False,
) -> Matching:
    """Set `row.measured[arch]` from the runs' values (see the module doc for the rule).

    `classes`: file -> class names it defines (else the classes the run saw). `group`: only
    rows under that fix. `one_fix`: a value whose rows sit under several fixes is listed, not
    written (a run with one fix reverted measured only that fix's row)."""
    out = Matching(problems=[] if problems is None else problems)
    amap, rx = arch_map or {}, value_regex(pattern)
    for res in results:
        run_arch = _run_arch(res, arch, amap)
        if run_arch is None:
            out.problems.append(
                Problem(file="results", message="run has no detected GPU arch; pass --arch")
            )
            continue
        for f in res.files:
            mine = [r for r in rows if same_file(r.file, f.path) and group in (None, r.group)]
            found = measurements(f, key, rx, out.problems)
            known = _file_classes(f, found, classes)
            _assign(out, mine, found, known, mapping or {}, one_fix, run_arch)
    _describe(out)
    return out


def _file_classes(f: FileResult, found: list[Measurement], classes) -> set[str]:
    """The classes the file defines (when known) and those the run saw."""
    seen = {c for m in found if (c := class_of(m.nodeid))}
    for name, names in (classes or {}).items():
        if same_file(name, f.path):
            return seen | set(names)
    return seen


def _assign(out: Matching, rows, found, known, mapping, one_fix, arch) -> None:
    claims: dict[int, list[Measurement]] = {}
    for m in found:
        hits = match_row(rows, m.nodeid, m.case, known, mapping)
        fixes = sorted({r.group or "" for r in hits})
        if not hits:
            out.unmatched.append(m)
        elif one_fix and len(fixes) > 1:
            out.several_fixes.append((m, fixes))
        for r in hits if not (one_fix and len(fixes) > 1) else ():
            claims.setdefault(id(r), []).append(m)
    by_id = {id(r): r for r in rows}
    for rid, ms in claims.items():
        row = by_id[rid]
        if len({m.nodeid for m in ms}) > 1:
            out.claimed_twice.append((row, ms))
            continue
        row.measured[arch] = ms[-1].value
        out.filled.append((row, ms[-1]))


def _describe(out: Matching) -> None:
    for m in out.unmatched:
        message = f"{m.nodeid}: value {m.value!r} matches no row"
        out.problems.append(Problem(file=m.file, message=message))
    for row, ms in out.claimed_twice:
        message = f"row '{row.case}' is claimed by {', '.join(m.nodeid for m in ms)}"
        out.problems.append(Problem(file=row.file, line=row.line, message=message))
    for m, fixes in out.several_fixes:
        message = f"{m.nodeid}: its rows sit under {', '.join(fixes)}; name one with --group"
        out.problems.append(Problem(file=m.file, message=message))
