"""Every command explains itself with an example."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ci_budget.cli import COMMANDS

SUBCOMMANDS = [[name.replace("_", "-")] for name in COMMANDS] + [
    ["history", "add"],
    ["history", "show"],
]


def _help(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ci_budget.cli", *args, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_top_level_help_lists_every_command_with_examples():
    proc = _help()
    assert proc.returncode == 0
    for name in COMMANDS:
        assert name.replace("_", "-") in proc.stdout
    assert "examples:" in proc.stdout


@pytest.mark.parametrize("words", SUBCOMMANDS, ids=" ".join)
def test_each_subcommand_help_ends_with_an_example(words):
    proc = _help(*words)
    assert proc.returncode == 0, proc.stderr
    example = proc.stdout.split("example:\n", 1)
    assert len(example) == 2 and "ci-budget " + words[0] in example[1]
