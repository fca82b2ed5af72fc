"""The run-ci run of real size in fixtures/sglang_run/run_ci.json (see its `about` and
tests/conformance/harness/run_fixture.py): its registrations, and one results file per suite.

Per-class times are not in the fixture: each file's time is split here by a fixed rule (6 s of
start-up and imports unattributed, the rest over its test classes in turn: 40 % class setup, a
launched server's share, 1 s teardown, the rest its tests)."""

from __future__ import annotations

import json
from pathlib import Path

from ci_budget.budget.status import build_report
from ci_budget.config import Config
from ci_budget.models import ClassTiming, FileResult, Registration, Report, RunMeta, RunResults

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "sglang_run" / "run_ci.json"
TIMEOUT = 1200.0  # sglang's per-commit --timeout-per-file


def load() -> dict:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["files"] = [dict(zip(data["columns"], row, strict=True)) for row in data["files"]]
    return data


def _classes(path: str, names: list[str], elapsed: float) -> tuple[list[ClassTiming], float]:
    unattributed = min(6.0, elapsed)
    if not names:
        return [], elapsed
    share = (elapsed - unattributed) / len(names)
    out = []
    for name in names:
        setup, teardown = 0.4 * share, min(1.0, 0.1 * share)
        out.append(
            ClassTiming(
                name=f"{path}::{name}", class_setup=setup, tests=share - setup - teardown,
                class_teardown=teardown, total=share,
            )
        )  # fmt: skip
    return out, unattributed


def _result(row: dict) -> FileResult:
    status, elapsed = row["status"], row["elapsed"]
    message = None
    if status == "timeout":
        elapsed, message = TIMEOUT, f"timed out after {TIMEOUT:.0f}s"
    elif status == "failed":
        message = "AssertionError: accuracy 0.71 below the threshold 0.74"
    classes, unattributed = _classes(row["file"], row["classes"], elapsed)
    return FileResult(
        path=row["file"], suite=row["suite"], est_time=row["est_time"], elapsed=elapsed,
        status=status, timeout=TIMEOUT, classes=classes, unattributed=unattributed,
        message=message, exit_code=0 if status == "passed" else 1,
    )  # fmt: skip


def registrations(data: dict) -> list[Registration]:
    return [
        Registration(
            file=r["file"], line=r["line"], function=f"register_{r['backend']}_ci",
            backend=r["backend"], est_time=r["est_time"], suite=r["suite"], stage=r["stage"],
            runner_config=r["runner_config"],
        )
        for r in data["files"]
    ]  # fmt: skip


def runs(data: dict) -> list[RunResults]:
    by_suite: dict[str, list[dict]] = {}
    for row in data["files"]:
        by_suite.setdefault(row["suite"], []).append(row)
    return [
        RunResults(
            meta=RunMeta(
                suites=[suite], runner_config=rows[0]["runner_config"], commit=data["commit"]
            ),
            files=[_result(row) for row in rows],
        )  # fmt: skip
        for suite, rows in sorted(by_suite.items())
    ]


def report() -> Report:
    data = load()
    return build_report(registrations(data), runs(data), Config())
