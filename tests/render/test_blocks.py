"""File names in narrow columns: the shortest distinguishing tail, linked to the line."""

from __future__ import annotations

from ci_budget.render.blocks import blob_base, file_cell, short_names


def test_short_names_tell_files_apart():
    names = short_names(
        [
            "test/registered/a/test_x.py",
            "test/registered/b/test_x.py",
            "test/registered/b/test_y.py",
        ]
    )
    assert names == {
        "test/registered/a/test_x.py": "a/test_x.py",
        "test/registered/b/test_x.py": "b/test_x.py",
        "test/registered/b/test_y.py": "test_y.py",
    }
    assert short_names(["x.py", "d/x.py"]) == {"x.py": "x.py", "d/x.py": "d/x.py"}


def test_link_keeps_the_full_path_and_line():
    blob = blob_base("https://github.com", "sgl-project/sglang", "a" * 40)
    cell = file_cell("test/registered/a/test_x.py", 27, "a/test_x.py", blob)
    assert cell == (
        f"[`a/test_x.py`](https://github.com/sgl-project/sglang/blob/{'a' * 40}"
        "/test/registered/a/test_x.py#L27)"
    )


def test_untrusted_path_cannot_break_out_of_the_link():
    blob = blob_base("https://github.com", "o/r", "b" * 40)
    cell = file_cell("t/x) [evil](http://e.example).py", 3, "x) [evil](http://e.example).py", blob)
    url = cell.rsplit("](", 1)[1]
    assert " " not in url and url.count(")") == 1 and url.endswith("#L3)")


def test_no_link_without_a_well_formed_commit_or_repository():
    assert blob_base("https://github.com", "o/r", None) is None
    assert blob_base("https://github.com", "o/r", "main; rm -rf") is None
    assert blob_base("https://github.com", "o/r/../x", "c" * 40) is None
    assert file_cell("t/x.py", 3, "x.py", None) == "`x.py`"
