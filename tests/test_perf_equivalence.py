"""Fast paths give exactly what the plain paths give.

- Test classes built without validation must equal freshly validated ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.genresults import json_report
from ci_budget.models import TestTiming
from ci_budget.results.timings import file_results_from_json_report
from ci_budget.workspace.result_files import read_json

SAMPLE = Path(__file__).parent / "fixtures" / "json_report" / "sample.json"


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


# The static report (`diff`) with and without its scan cache, against a full parse of
# every base blob and every head file.

T = "test/registered/"
MAIN = '\n\nif __name__ == "__main__":\n    main()\n'


def _reg(est: int, stage: str = "base-b") -> str:
    return f'register_cuda_ci(est_time={est}, stage="{stage}", runner_config="1-gpu-large")' + MAIN


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    from gitrepo import git

    for rel, text in files.items():
        if text is None:
            (repo / rel).unlink()
        else:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def _pr_repo(tmp_path: Path) -> tuple[Path, str]:
    """A base commit of 40 registered files and a PR changing, adding and removing some."""
    from gitrepo import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = {T + f"area/test_{i:02d}.py": _reg(10 * i + 5) for i in range(40)}
    base[T + "area/test_error.py"] = "register_cuda_ci(est_time=X, suite='s')" + MAIN
    base[T + "area/test_plain.py"] = "def test_x():\n    pass\n"
    base[T + "raised.py"] = _reg(600)
    base[T + "gone.py"] = _reg(100)
    sha = _commit(repo, base, "base")
    head = {T + "raised.py": _reg(790), T + "gone.py": None, T + "fresh.py": _reg(40, "base-a")}
    _commit(repo, head, "head")
    (repo / T / "uncommitted.py").write_text(_reg(30), encoding="utf-8")  # the work tree counts
    return repo, sha


def _full_parse_report(repo: Path, sha: str, settings):
    from ci_budget.budget.diff import build_static
    from ci_budget.registry.parse import merge, scan_source
    from ci_budget.workspace.git import list_files, read_blobs

    config = settings.config
    blobs = read_blobs(repo, sha, list_files(repo, sha, config))
    base_full = merge(scan_source(blobs[rel], rel, config) for rel in sorted(blobs))
    head_files = sorted(p.relative_to(repo).as_posix() for p in (repo / T).rglob("*.py"))
    head_full = merge(scan_source((repo / rel).read_bytes(), rel, config) for rel in head_files)
    return build_static(
        base_full, head_full, set(blobs), set(head_files), config, base_ref="HEAD~1",
        base_commit=sha,
    )  # fmt: skip


def test_static_report_cold_and_warm_cache_equal_a_full_parse_of_both_trees(tmp_path, monkeypatch):
    from ci_budget.app.diff import DiffOptions, build
    from ci_budget.app.settings import Settings

    repo, sha = _pr_repo(tmp_path)
    settings = Settings(repo)
    reference = _full_parse_report(repo, sha, settings).model_dump()
    cache = tmp_path / "scan-cache.json"
    assert build(settings, DiffOptions(base="HEAD~1")).model_dump() == reference
    assert build(settings, DiffOptions(base="HEAD~1", cache=cache)).model_dump() == reference
    written = cache.read_bytes()
    keys = json.loads(written)["entries"]
    # every unchanged head file by its blob id, plus the base versions of the changed files
    assert (
        sum(k.startswith("fast ") for k in keys) == 42
        and sum(k.startswith("full ") for k in keys) == 2
    )

    reads = []
    real = Path.read_bytes

    def counting(self):
        reads.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    assert build(settings, DiffOptions(base="HEAD~1", cache=cache)).model_dump() == reference
    # warm: only files git says changed since the base are read (the cache itself is read_text)
    assert sorted(reads) == ["fresh.py", "raised.py", "uncommitted.py"]
    assert cache.read_bytes() == written  # nothing new: not rewritten


def test_a_cache_entry_that_does_not_fit_its_key_is_scanned_afresh(tmp_path):
    """A cache may come from elsewhere (a CI cache store): an entry that does not validate, or
    whose records name another file, is ignored; an unreadable file is no cache."""
    from ci_budget.app.diff import DiffOptions, build
    from ci_budget.app.settings import Settings

    repo, sha = _pr_repo(tmp_path)
    settings = Settings(repo)
    reference = _full_parse_report(repo, sha, settings).model_dump()
    cache = tmp_path / "scan-cache.json"
    build(settings, DiffOptions(base="HEAD~1", cache=cache))
    data = json.loads(cache.read_text())
    keys = sorted(k for k in data["entries"] if k.startswith("fast "))
    other = data["entries"][keys[1]]
    data["entries"][keys[0]] = other  # records of another file under this file's blob id
    data["entries"][keys[2]] = {"registrations": [{"file": keys[2].split(" ")[2]}]}  # invalid
    data["entries"][keys[3]] = "not a scan"
    cache.write_text(json.dumps(data))
    assert build(settings, DiffOptions(base="HEAD~1", cache=cache)).model_dump() == reference
    cache.write_text("{not json")
    assert build(settings, DiffOptions(base="HEAD~1", cache=cache)).model_dump() == reference
    assert json.loads(cache.read_text())["entries"]  # rebuilt


def test_report_base_cache_on_the_command_line(tmp_path):
    import subprocess
    import sys

    repo, _ = _pr_repo(tmp_path)
    cache = tmp_path / "cache" / "scan.json"
    outs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "ci_budget.cli", "diff", "--base", "HEAD~1", "--format",
             "json", "--out", str(tmp_path / "budget.md"), "--cache", str(cache)],
            cwd=repo, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outs.append(json.loads(done.stdout))
    assert cache.is_file() and outs[0] == outs[1]
    assert {c["file"].rsplit("/", 1)[-1] for c in outs[0]["changes"]} == {
        "raised.py", "gone.py", "fresh.py", "uncommitted.py"
    }  # fmt: skip


# The run report's markdown renders the per-file details only as far as the comment limit.


def test_markdown_of_a_large_run_equals_rendering_every_detail(monkeypatch):
    from benchmarks.genresults import _path, registrations_for
    from ci_budget.budget.status import build_report
    from ci_budget.config import Config
    from ci_budget.models import RunMeta, RunResults
    from ci_budget.render import run_folds, run_md

    files = file_results_from_json_report(json_report(6_000, 300))
    runs = [RunResults(meta=RunMeta(mode="pytest"), files=files)]
    report = build_report(registrations_for([_path(i) for i in range(300)]), runs, Config())
    real, unshown = run_folds.rendered_until, []

    def capped(render, todo, limit):
        shown, left = real(render, todo, limit)
        unshown.append(left)
        return shown, left

    def render_all(render, todo, limit):
        return [render(x) for x in todo], 0

    left_out = []  # items left unrendered, per comment
    for limit in (2_000, 20_000, 65_536):  # small limits cut other parts first, or these
        monkeypatch.setattr(run_folds, "rendered_until", capped)
        unshown.clear()
        text = run_md.markdown(report, limit=limit)
        left_out.append(sum(unshown))
        monkeypatch.setattr(run_folds, "rendered_until", render_all)
        assert run_md.markdown(report, limit=limit) == text
        assert "per-class breakdowns not shown" in text
    assert min(left_out) > 0  # it stopped early at every limit


def test_parts_with_unrendered_items_fit_like_fully_rendered_ones():
    """A part that stops rendering once over the limit is cut exactly as the whole part is."""
    import random

    from ci_budget.render.fit import Part, fit_parts, join, rendered_until

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
    roots = [Path(__file__).parents[1] / "src", Path(sysconfig.get_paths()["stdlib"])]
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
    from ci_budget.render.fit import NEVER, Part

    with pytest.raises(ValueError, match="never cut"):
        Part("t", "", ["x"], priority=NEVER, unshown=3)
    assert Part("t", "", ["x"], priority=1, unshown=3).count() == 4
