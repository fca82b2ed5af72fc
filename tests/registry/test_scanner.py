"""The fast scan gives exactly the full parse's records, errors and warnings."""

from __future__ import annotations

import pytest

from benchmarks.gentree import make_tree
from ci_budget.config import Config
from ci_budget.registry.fast import scan_source_fast
from ci_budget.registry.parse import scan_source
from ci_budget.workspace.scan import discover, glob_files, scan_paths

MAIN = 'if __name__ == "__main__":\n    unittest.main()\n'
TRICKY = {
    "docstring_mentions_call": '"""\nregister_cuda_ci(5, "doc")\n"""\nregister_cuda_ci(6, "s")\n'
    + MAIN,
    "last_candidate_in_docstring": 'register_cuda_ci(6, "s")\nX = """\nregister_cuda_ci(5, "d")\n"""\n'
    + MAIN,
    "candidate_inside_brackets": 'x = [\nregister_cuda_ci(5, "a"),\n]\nregister_cuda_ci(6, "s")\n'
    + MAIN,
    "nested_call_after": 'register_cuda_ci(6, "s")\n\ndef f():\n    register_cuda_ci(1, "x")\n'
    + MAIN,
    "attribute_call": 'import m\nregister_cuda_ci(6, "s")\nm.register_cuda_ci(1, "x")\n' + MAIN,
    "paren_in_string": 'register_cuda_ci(6, "s (x", disabled=")")\n' + MAIN,
    "triple_quote_in_call": 'register_cuda_ci(6, """s""")\n' + MAIN,
    "multiline_with_comment": 'register_cuda_ci(\n    6,  # why (really)\n    "s",\n)\n' + MAIN,
    "main_without_call": 'register_cuda_ci(6, "s")\nif __name__ == "__main__":\n    pass\n',
    "two_main_blocks": 'register_cuda_ci(6, "s")\nif __name__ == "__main__":\n    run()\n'
    "x = 1\nif __name__ == '__main__':\n    pass\n",
    "registration_after_main": MAIN + 'register_cuda_ci(6, "s")\n',
    "syntax_error_before": 'def broken(:\n    pass\nregister_cuda_ci(6, "s")\n' + MAIN,
    "syntax_error_in_call": 'register_cuda_ci(6, "s"\n' + MAIN,
    "import_only": "from sglang.test.ci.ci_register import register_cuda_ci\n\ndef test(): pass\n",
    "stub_and_indented_call": "def register_cuda_ci(*a):\n    pass\nif True:\n"
    '    register_cuda_ci(5, "s")\n',
    "longer_name": 'register_cuda_ci_extra(5, "s")\nregister_cuda_ci(6, "t")\n' + MAIN,
    "space_before_paren": 'register_cuda_ci (6, "s")\n' + MAIN,
    "errors": "register_cuda_ci(est_time=True, suite=7)\nregister_cuda_ci(5, FLAG)\n" + MAIN,
    "first_line": 'register_cuda_ci(6, "s")',
    "continuation": 'x = 1 + \\\n0\nregister_cuda_ci(6, "s")\n' + MAIN,
    "crlf": 'register_cuda_ci(6, "s")\r\nif __name__ == "__main__":\r\n    main()\r\n',
    "bom": '\ufeffregister_cuda_ci(6, "s")\n' + MAIN,
    # the lexer before the first registration, and the statements around other calls
    "fstring_before": 'x = f"{a!r}("\nregister_cuda_ci(6, "s")\n' + MAIN,
    "future_import": 'from __future__ import annotations\nregister_cuda_ci(6, "s")\n' + MAIN,
    "utf8_cookie": '# -*- coding: utf-8 -*-\nimport os\nregister_cuda_ci(6, "s")\n' + MAIN,
    "latin1_cookie": '# -*- coding: latin-1 -*-\nregister_cuda_ci(6, "s")\n' + MAIN,
    "escapes_before": 'X = "a\\"b(" + \'c\\\\\'\nY = """q(""" + r"\\\\"\nZ = (1,\n 2)\n'
    + 'register_cuda_ci(6, "s")\n'
    + MAIN,
    "block_opener_before": 'if A:\nregister_cuda_ci(6, "s")\n' + MAIN,
    "comment_opener_before": "if A:  # why\n    pass\n# done\nregister_cuda_ci(6, 's')\n" + MAIN,
    "decorator_before": '@deco\nregister_cuda_ci(6, "s")\n' + MAIN,
    "unclosed_bracket_before": 'X = (\nregister_cuda_ci(6, "s")\n' + MAIN,
    "lone_cr": 'import os\rregister_cuda_ci(6, "s")\n' + MAIN,
    "null_byte": 'register_cuda_ci(6, "s")\n# \0\n' + MAIN,
    "indented_call_after": 'register_cuda_ci(6, "s")\nif FLAG:\n    register_cuda_ci(5, "x")\n\n'
    + "class A:\n    pass\n"
    + MAIN,
    "only_indented_call": 'import os\nif FLAG:\n    register_cuda_ci(5, "x")\n' + MAIN,
    "attribute_call_before": 'import m\nm.register_cuda_ci(1, "x")\nregister_cuda_ci(6, "s")\n'
    + MAIN,
    "commented_call_in_class": 'register_cuda_ci(6, "s")\n\nclass A:\n    # register_cuda_ci(5)\n'
    + "    def t(self):\n        pass\n"
    + MAIN,
    "decorated_stray": 'register_cuda_ci(6, "s")\n@deco\ndef f():\n    register_cuda_ci(1, "x")\n'
    + MAIN,
    "else_branch_stray": 'register_cuda_ci(6, "s")\nif A:\n    pass\nelse:\n    register_cuda_ci(1)\n'
    + MAIN,
    "call_after_comment": 'x = [register_cuda_ci  # c\n  (5, "s")]\nregister_cuda_ci(6, "t")\n'
    + MAIN,
    "name_then_comment_line": 'register_cuda_ci  # why\n(6, "s")\n' + MAIN,
    "main_with_arguments": 'register_cuda_ci(6, "s")\nif __name__ == "__main__":\n'
    + "    unittest.main(verbosity=2, exit=False)\n",
    "main_mixed_indent": 'register_cuda_ci(6, "s")\nif __name__ == "__main__":\n    a()\n  b()\n',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_sources_match_the_full_parse(name):
    raw = TRICKY[name].encode()
    assert scan_source_fast(raw, "t.py", Config()) == scan_source(raw, "t.py", Config())


def test_a_syntax_error_outside_the_parsed_parts_is_left_to_the_full_scan():
    """The documented difference: the fast path parses the registrations, the statements around
    other calls of a name and the main block; a broken import line is for `scan --full`."""
    raw = b'imoprt os\nregister_cuda_ci(6, "s")\n' + MAIN.encode()
    assert [r.suite for r in scan_source_fast(raw, "t.py", Config()).registrations] == ["s"]
    assert scan_source(raw, "t.py", Config()).errors[0].message.startswith("cannot parse")


def test_generated_tree_matches_the_full_parse(tmp_path):
    rels = make_tree(tmp_path, 120)
    config = Config()
    fast = scan_paths(tmp_path, rels, config, jobs=1)
    assert fast == scan_paths(tmp_path, rels, config, full=True, jobs=1)
    assert len(fast.registrations) > 100 and fast.errors and fast.warnings


def test_workers_give_the_same_scan(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    rels = make_tree(root, 60)
    config = Config()
    expected = scan_paths(root, rels, config, jobs=1)
    monkeypatch.setattr("ci_budget.workspace.scan.PARALLEL_MIN_FILES", 1)
    assert scan_paths(root, rels, config, jobs=2) == expected


def test_discover_on_generated_tree(tmp_path):
    rels = make_tree(tmp_path, 5)
    assert discover(tmp_path, Config()) == rels


@pytest.mark.parametrize(
    "pattern",
    ["t/**/*.py", "t/*.py", "t/**/test_*.py", "**/*.py", "t/*/x*.py", "t/a/plain.py", "t/**"],
)
def test_discovery_walk_finds_what_path_glob_finds(tmp_path, pattern):
    """Hidden folders, a folder named like a file, symbolic links to files, folders (not
    followed by `**`, as Path.glob) and nowhere."""
    root = tmp_path / "repo"
    for rel in ("t/a/test_1.py", "t/a/plain.py", "t/.hidden/test_2.py", "t/b/c/xtest.py",
                "t/top.py", "t/a/notes.txt", "elsewhere/test_3.py"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x = 1\n")
    (root / "t/dir.py").mkdir()
    (root / "t/link.py").symlink_to(root / "t/top.py")
    (root / "t/broken.py").symlink_to(root / "t/nowhere.py")
    (root / "t/linked").symlink_to(root / "elsewhere", target_is_directory=True)
    expected = sorted(p.relative_to(root).as_posix() for p in root.glob(pattern) if p.is_file())
    assert sorted(glob_files(root, pattern)) == expected
    assert sorted(glob_files(root, "missing/**/*.py")) == []
