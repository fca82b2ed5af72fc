"""Every command explains itself with an example, and `--help` stays fast."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ci_budget.cli import COMMANDS, build_parser, leaves

TOP = ["scan", "plan", "run", "report", "diff", "guard", "history"]
SUBCOMMANDS = [[name] for name in COMMANDS] + [
    leaf.prog.split()[1:] for leaf in leaves(build_parser()) if len(leaf.prog.split()) > 2
]


def _help(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", *args, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_top_level_help_lists_the_seven_commands_with_examples():
    proc = _help()
    assert proc.returncode == 0
    assert COMMANDS == TOP
    listed = proc.stdout.split("positional arguments:", 1)[1].split("options:", 1)[0]
    names = [line.split()[0] for line in listed.splitlines() if re.match(r"    \S", line)]
    assert names == TOP
    assert "examples:" in proc.stdout


def test_the_verbs_of_guard_and_history():
    assert sorted(" ".join(words) for words in SUBCOMMANDS if len(words) == 2) == [
        "guard check", "guard fill", "guard suggest", "guard verify",
        "history add", "history show", "history suggest", "history watch",
    ]  # fmt: skip


@pytest.mark.parametrize("words", SUBCOMMANDS, ids=" ".join)
def test_each_subcommand_help_ends_with_an_example(words):
    proc = _help(*words)
    assert proc.returncode == 0, proc.stderr
    example = proc.stdout.split("example:\n", 1)
    assert len(example) == 2 and "ci-budget " + words[0] in example[1]


def test_help_and_a_command_load_only_what_they_use():
    """`--help` builds no command's options; a command loads its own use case and no other."""
    code = (
        "import sys\nfrom ci_budget.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ci_budget.app.', 'pydantic'))))"
    )
    top = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True)
    assert top.stdout.splitlines()[-1] == "[]"
    run = subprocess.run(
        [sys.executable, "-c", code, "run", "--help"], capture_output=True, text=True
    )
    loaded = run.stdout.splitlines()[-1]
    assert "ci_budget.app.run" in loaded and "pydantic" not in loaded
    assert "ci_budget.app.diff" not in loaded and "ci_budget.app.suggest" not in loaded


def test_conformance_is_no_command_of_the_package():
    """The conformance harness is the project's proof, under tests/ (python -m
    tests.conformance.harness): `ci-budget conformance` is an ordinary usage error."""
    proc = subprocess.run([sys.executable, "-m", "ci_budget.cli", "conformance", "."],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2 and "invalid choice: 'conformance'" in proc.stderr
