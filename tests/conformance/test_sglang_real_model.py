"""On a real sglang checkout with a real partition model (opt-in: set CI_BUDGET_SGLANG_CHECKOUT
to the checkout and CI_BUDGET_PARTITION_MODEL to a model.json, e.g. one sglang-ci-stats'
derive.py wrote from real runs): `plan` on the `run-ci` label and `run --dry-run --partition i/n`
give the shard counts and files that sglang's compute_partitions.py and run_suite.py give with
`--partition-model-file`, and `suggest --partition-model --all` lists exactly the changes
sglang's update_est_time.py `update_files(model, dry_run=True)` returns, plus the registrations
its text match misses. sglang's scripts are run from the checkout by file path, never copied.
Slow (a scan per shard): about four minutes on 2 cores."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.cli import cli

from tests.trigger.test_plan_cli import INSTALLATION_TOKEN, _pr_event, read_outputs

ROOT = os.environ.get("CI_BUDGET_SGLANG_CHECKOUT")
MODEL = os.environ.get("CI_BUDGET_PARTITION_MODEL")
pytestmark = pytest.mark.skipif(
    not (ROOT and MODEL), reason="set CI_BUDGET_SGLANG_CHECKOUT and CI_BUDGET_PARTITION_MODEL"
)


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = cli(*args, "--root", ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_plan_and_run_split_as_sglangs_scripts_do_with_the_model(tmp_path: Path, github_standin):
    from tests.conformance.harness.reference import reference_view

    github_standin.state.roles["Codertocat"] = "write"  # who applied the label: authorised
    ref = reference_view(Path(ROOT), Path(MODEL))
    event = tmp_path / "event.json"
    event.write_text(json.dumps(_pr_event("labeled", ["run-ci"], "run-ci")))
    output = tmp_path / "output.txt"
    _cli("plan", "--partition-model", MODEL, env={
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(output), "GITHUB_REPOSITORY": github_standin.state.repo,
        "GITHUB_API_URL": github_standin.url, "GITHUB_TOKEN": INSTALLATION_TOKEN,
        "GITHUB_SHA": "d" * 40,
    })  # fmt: skip
    rows = json.loads(read_outputs(output)["matrix"])["include"]
    sizes = {r["suite"]: int(r["partition"].split("/")[1]) for r in rows}
    assert sizes == {suite: view.size for suite, view in ref.suites.items()}
    backends = {r["suite"]: r.get("backend") or "cuda" for r in rows}  # as the job passes it
    for suite, view in sorted(ref.suites.items()):
        for i, files in enumerate(view.shards):
            out = _cli("run", "--dry-run", "--suite", suite, "--partition", f"{i}/{view.size}",
                       "--backend", backends[suite], "--partition-model", MODEL,
                       "--format", "json").stdout  # fmt: skip
            assert [f["path"] for f in json.loads(out)["files"]] == files, (suite, i)


def _update_files(model: dict) -> list[tuple]:
    path = Path(ROOT) / "scripts" / "ci" / "update_est_time.py"
    spec = importlib.util.spec_from_file_location("ci_budget_ref_update_est_time", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its REPO_ROOT is the checkout it is loaded from
    with contextlib.redirect_stderr(io.StringIO()):
        return [tuple(c) for c in module.update_files(model, dry_run=True)]


def test_suggest_lists_what_update_files_writes_plus_what_its_text_match_misses():
    theirs = {
        (f, s): (old, new) for f, s, old, new in _update_files(json.loads(Path(MODEL).read_text()))
    }
    ours = json.loads(
        _cli("history", "suggest", "--partition-model", MODEL, "--all", "--format", "json").stdout
    )
    found = {(s["file"], s["suite"]): (s["est_time"], s["suggested"]) for s in ours if s["updater"]}
    assert found == theirs  # every change, same old and new value
    missed = [s for s in ours if not s["updater"]]
    assert all(s["updater_missed"] for s in missed)
    assert not {(s["file"], s["suite"]) for s in missed} & set(theirs)
