"""Fast paths give exactly what the plain paths give.

- Test classes built without validation must equal freshly validated ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.genresults import json_report
from ci_budget.models import TestTiming
from ci_budget.results.timings import file_results_from_json_report
from ci_budget.workspace.files import read_json

SAMPLE = Path(__file__).parents[1] / "fixtures" / "json_report" / "sample.json"


def whole(path: Path):
    return file_results_from_json_report(read_json(path))


def test_unvalidated_timings_equal_validated_ones():
    """Classes are built without validation: the same values, types and JSON as the validated
    constructors give, and every field set."""
    from dataclasses import asdict, fields

    from pydantic import TypeAdapter

    from ci_budget.models import ClassTiming

    [result] = [r for r in whole(SAMPLE) if r.classes]
    for cls in result.classes:
        values = {f.name: getattr(cls, f.name) for f in fields(ClassTiming)}  # all set
        assert ClassTiming(**values) == cls
        dump = TypeAdapter(ClassTiming).dump_json
        assert dump(ClassTiming(**values)) == dump(cls)
        for case in cls.test_cases:
            fresh = TestTiming(**asdict(case))
            assert case == fresh and asdict(case) == asdict(fresh)
            assert [type(getattr(case, f.name)) for f in fields(TestTiming)] == [
                type(getattr(fresh, f.name))
                if f.name != "user_properties"
                else type(case.user_properties)
                for f in fields(TestTiming)
            ]
            assert TypeAdapter(TestTiming).dump_json(case) == TypeAdapter(TestTiming).dump_json(
                fresh
            )
    case.outcome = "failed"  # a plain attribute
    assert case.outcome == "failed"


# The run report's markdown renders the per-file details only as far as the comment limit.


def test_markdown_of_a_large_run_equals_rendering_every_detail(monkeypatch):
    from benchmarks.genresults import _path, registrations_for
    from ci_budget.budget.status import build_report
    from ci_budget.config import Config
    from ci_budget.models import RunMeta, RunResults
    from ci_budget.render import run_md

    files = file_results_from_json_report(json_report(6_000, 300))
    runs = [RunResults(meta=RunMeta(mode="pytest"), files=files)]
    report = build_report(registrations_for([_path(i) for i in range(300)]), runs, Config())
    real, unshown = run_md.rendered_until, []

    def capped(render, todo, limit):
        shown, left = real(render, todo, limit)
        unshown.append(left)
        return shown, left

    def render_all(render, todo, limit):
        return [render(x) for x in todo], 0

    left_out = []  # items left unrendered, per comment
    for limit in (2_000, 20_000, 65_536):  # small limits cut other parts first, or these
        monkeypatch.setattr(run_md, "rendered_until", capped)
        unshown.clear()
        text = run_md.markdown(report, limit=limit)
        left_out.append(sum(unshown))
        monkeypatch.setattr(run_md, "rendered_until", render_all)
        assert run_md.markdown(report, limit=limit) == text
        assert "per-class breakdowns not shown" in text
    assert min(left_out) > 0  # it stopped early at every limit


def test_parts_with_unrendered_items_fit_like_fully_rendered_ones():
    """A part that stops rendering once over the limit is cut exactly as the whole part is."""
    import random

    from ci_budget.render.blocks import Part, fit_parts, join, rendered_until

    rnd = random.Random(3)
    for _ in range(300):
        limit = rnd.randint(50, 3_000)
        shapes = [
            (
                rnd.choice([1, 2, 5, 99]),
                [("x" * rnd.randint(1, 200)) for _ in range(rnd.randint(0, 60))],
            )
            for _ in range(rnd.randint(1, 5))
        ]

        def parts(lazy: bool, shapes=shapes, limit=limit):
            out = []
            for k, (prio, items) in enumerate(shapes):
                if lazy and prio != 99:
                    shown, unshown = rendered_until(str, items, limit)
                    out.append(Part(f"\n#{k}\n", "h\n", shown, priority=prio, unshown=unshown))
                else:
                    out.append(Part(f"\n#{k}\n", "h\n", list(items), priority=prio))
            return out

        whole, lazy = parts(False), parts(True)
        assert fit_parts("top\n", lazy, limit) == fit_parts("top\n", whole, limit)
        assert join("top\n", lazy, limit) == join("top\n", whole, limit)


# Guard docstrings: classes are found by walking statements only, in `ast.walk`'s order.


@pytest.mark.slow  # parses the standard library
def test_class_walk_meets_the_classes_ast_walk_meets_in_its_order():
    import ast
    import sysconfig

    from ci_budget.arch.docstrings import class_defs

    nested = (
        "class A:\n    class B:\n        def f(self):\n            class C: pass\n"
        "try:\n    class D: pass\nexcept E:\n    class F: pass\nelse:\n    class G: pass\n"
        "finally:\n    class H: pass\n"
        "match x:\n    case 1:\n        class I: pass\n"
        "with y:\n    if z:\n        class J: pass\n    else:\n        class K: pass\n"
        "async def g():\n    async with w:\n        class L: pass\n"
        "for i in x:\n    class M: pass\nelse:\n    class N: pass\n"
        "while x:\n    class O: pass\n"
        "f = lambda: [x for x in y]\n@dec(lambda: 1)\nclass P(Q, metaclass=R): pass\n"
    )
    sources = [nested]
    roots = [Path(__file__).parents[2] / "src", Path(sysconfig.get_paths()["stdlib"])]
    for root in roots:
        sources += [
            p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(root.rglob("*.py"))[:400]
        ]
    checked = 0
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        expected = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        assert class_defs(tree) == expected
        checked += bool(expected)
    assert checked > 100


def test_a_part_never_cut_cannot_leave_items_unrendered():
    from ci_budget.render.blocks import NEVER, Part

    with pytest.raises(ValueError, match="never cut"):
        Part("t", "", ["x"], priority=NEVER, unshown=3)
    assert Part("t", "", ["x"], priority=1, unshown=3).count() == 4
