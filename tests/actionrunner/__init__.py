"""Runs action.yml's steps and a workflow's jobs locally, as GitHub's runner would (see runner)."""

from .expressions import Unsupported, evaluate, render
from .runner import (
    ActionRun,
    JobRun,
    Runner,
    Step,
    listens,
    load_yaml,
    read_output_file,
    run_scheduled,
)

__all__ = [
    "ActionRun",
    "JobRun",
    "Runner",
    "Step",
    "Unsupported",
    "evaluate",
    "listens",
    "load_yaml",
    "read_output_file",
    "render",
    "run_scheduled",
]
