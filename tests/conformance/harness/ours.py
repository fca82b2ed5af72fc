"""What ci-budget decides for a checkout, zero config, through the code its users run: the
registry scan, the `run-ci` dispatch as `plan` sizes it (the same numbers: `plan_numbers`, its
weights, `dispatch`), and every shard's files as `ci-budget run --dry-run --suite S --partition
i/n --backend B` lists them (the command line each matrix row runs; in this process, through
`ci_budget.cli.main`)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from ci_budget.app.numbers import plan_numbers
from ci_budget.app.settings import AppError, Sink
from ci_budget.config import Config
from ci_budget.sharding.dispatch import dispatch
from ci_budget.workspace.scan import scan_tree
from tests.conformance.harness.compare import Reg, SuiteView, View

LABEL = "run-ci"


def run_files(root: Path, argv: list[str], strict: bool = False) -> list[dict]:
    """`ci-budget run ARGV --dry-run --format json`: [{"file", "timeout"}]; none where it
    refuses, or with `strict` its one-line error as an AppError."""
    from ci_budget.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["run", "--root", str(root), *argv, "--dry-run", "--format", "json"])
        except SystemExit as exc:  # argparse's usage error
            code = exc.code if isinstance(exc.code, int) else 2
    if code and strict:
        why = (err.getvalue().strip().splitlines() or ["no message"])[-1]
        raise AppError(f"ci-budget run {' '.join(argv)}: exit {code}: {why}")
    files = json.loads(out.getvalue() or '{"files": []}')["files"]
    return [{"file": f["path"], "timeout": f["timeout"]} for f in files]


@contextlib.contextmanager
def one_scan():
    """Every `run --dry-run` in here reads the same tree: scan it once (run_suite.py's side
    gets the same, see run_suite_ref)."""
    from ci_budget.workspace import scan as module

    real, seen = module.scan_tree, {}

    def once(root, config, **kwargs):
        key = (str(root), config.model_dump_json())
        if key not in seen:
            seen[key] = real(root, config, **kwargs)
        return seen[key]

    module.scan_tree = once
    try:
        yield
    finally:
        module.scan_tree = real


def our_view(root: Path, config: Config, model_path: Path | None, sink: Sink) -> View:
    view = View()
    scan = scan_tree(root, config)
    view.warnings = [str(p) for p in scan.errors]
    view.registrations = [
        Reg(
            r.file, r.backend, r.est_time, r.stage, r.runner_config, r.suite, r.nightly, r.disabled
        )  # fmt: skip
        for r in scan.registrations
    ]
    # sglang's run-ci; where its own gate answers run-ci, ci-budget's label for the same suites
    gating = config.github.gating_labels
    patterns = gating.get(LABEL) or next(iter(gating.values()), None) or None
    numbers = plan_numbers(None, model_path, sink, lenient=True)  # as `plan` reads them
    weights = None if numbers.empty else numbers.weights(scan.registrations)
    plans, notes = dispatch(scan.registrations, config, patterns, weights, numbers.model)
    view.warnings += notes
    extra = ["--partition-model", str(model_path.resolve())] if model_path is not None else []
    with one_scan():
        for p in plans:
            backend = ["--backend", p.backend] if p.backend else []
            shards = [
                [f["file"] for f in run_files(root, ["--suite", p.suite, "--partition",
                                                     f"{i}/{p.size}", *backend, *extra], True)]
                for i in range(p.size)
            ]  # fmt: skip
            view.suites[p.suite] = SuiteView(p.size, p.max_parallel, p.runs_on, shards)
    return view
