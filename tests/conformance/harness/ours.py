"""What ci-budget decides for a checkout, zero config: the registry, the `run-ci` dispatch and
every shard's files in run order, in the shape sglang's scripts are compared in."""

from __future__ import annotations

from pathlib import Path

from ci_budget.config import Config
from ci_budget.conformance.view import Reg, SuiteView, View
from ci_budget.sharding.dispatch import dispatch
from ci_budget.sharding.model import PartitionModel
from ci_budget.sharding.select import select_jobs
from ci_budget.workspace.scan import scan_tree

LABEL = "run-ci"


def our_view(root: Path, config: Config, model: PartitionModel | None = None) -> View:
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
    # Only the model's seconds: elsewhere each registration keeps its own est_time, as sglang's
    # auto_partition does (a file registered twice in a suite is two items, 150 s and 300 s).
    weights = model.weights() if model is not None else {}
    plans, notes = dispatch(scan.registrations, config, patterns, weights, model)
    view.warnings += notes
    for p in plans:
        shards = [
            [
                j.path
                for j in select_jobs(
                    scan.registrations,
                    [p.suite],
                    partition=(i, p.size),
                    weights=weights,
                    backend=p.backend,
                ).jobs
            ]  # fmt: skip
            for i in range(p.size)
        ]
        view.suites[p.suite] = SuiteView(p.size, p.max_parallel, p.runs_on, shards)
    return view
