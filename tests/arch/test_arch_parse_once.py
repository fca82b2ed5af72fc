"""A reported file's guard tables, CI arch and class names come from one parse of its text."""

from __future__ import annotations

import ast

from ci_budget.arch import docstrings
from ci_budget.config import Config
from ci_budget.workspace.files import guard_files

SOURCE = '''"""Measured KL (CI runs H200).

| case | sm90 | sm100 |
|------|------|-------|
| a    | 1e-6 | 2e-6  |
"""

register_cuda_ci(est_time=60, suite="base-b-test-1-gpu-large")


class TestA:
    class Inner:
        pass
'''


def test_one_parse_per_file_and_the_same_answers(tmp_path, monkeypatch):
    (tmp_path / "test_a.py").write_text(SOURCE)
    calls = []
    real = ast.parse

    def counting(*args, **kwargs):
        if args and args[0] == SOURCE:
            calls.append(kwargs.get("filename"))
        return real(*args, **kwargs)

    monkeypatch.setattr(docstrings.ast, "parse", counting)
    rows, problems, classes = guard_files(tmp_path, ["test_a.py"], Config())
    assert len(calls) == 1
    assert classes == {"test_a.py": {"TestA", "Inner"}}
    assert [row.case for row in rows] == ["a"]
    assert docstrings.class_names(SOURCE) == {"TestA", "Inner"}
    assert docstrings.class_names("class B: pass\n") == {"B"}
    assert docstrings.class_names("def (:\n") == set()
