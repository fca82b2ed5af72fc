"""`ci-budget run` against the checkout's own `run_suite.py`, call by call as the per-commit
workflows make them: every stage job of `pr-test.yml` and `pr-test-extra.yml` (each shard, with
the flags `_pr-test-stage.yml` passes) and every `run_suite.py` call written out in a
`pr-test*.yml` step. Per call: the files, their order and their per-file timeouts, from
run_suite.py in listing mode (`run_suite_ref`) and from `ci-budget run --dry-run` twice: with
the same flags (the drop-in) and with no timeout flag (zero config: the timeouts read from the
workflows). Then the exit status, the files run and the TIMINGS block on a small tree built
from the checkout's three scripts, with a passing, a failing and a hanging file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.conformance.harness.ours import one_scan, run_files
from tests.conformance.harness.reference import PARTITIONS, _call, _load
from tests.conformance.harness.run_suite_ref import listings

STAGE_WORKFLOWS = (".github/workflows/pr-test.yml", ".github/workflows/pr-test-extra.yml")
MODEL = "/tmp/partition-model.json"  # where the stage jobs fetch sglang-ci-stats' model


@dataclass
class Call:
    label: str  # suite (partition), for the table
    argv: list[str]  # run_suite.py's arguments, as the workflow gives them


def _stage_hw(root: Path, uses: str) -> str:
    text = (root / uses.removeprefix("./")).read_text(encoding="utf-8")
    found = re.search(r"run_suite\.py\s+--hw\s+(\w+)", text)
    return found.group(1) if found else "cuda"


def _sizes(root: Path, workflow: Path, model_path: str | None) -> dict[str, int]:
    """suite -> shard count, as the workflow's check-changes computes it."""
    cp = _load(root / PARTITIONS, "ci_budget_dropin_compute_partitions")
    tests = cp._ci_register.collect_tests(cp.discover_files(str(root)), sanity_check=False)
    model = cp.load_partition_model(model_path) if model_path else None
    found = _call(cp.compute_partitions, tests=tests, repo_root=str(root),
                  run_timeouts=cp.load_run_timeouts(str(workflow)), partition_model=model,
                  full_parallel=False)  # fmt: skip
    return {suite: info["size"] for suite, info in found.items()}


def stage_calls(root: Path, model_path: str | None) -> list[Call]:
    calls = []
    for rel in STAGE_WORKFLOWS:
        path = root / rel
        if not path.is_file():
            continue
        sizes = _sizes(root, path, model_path)
        for job in (yaml.safe_load(path.read_text(encoding="utf-8")).get("jobs") or {}).values():
            given = job.get("with") or {} if isinstance(job, dict) else {}
            suite = given.get("self_name")
            if not isinstance(job.get("uses"), str) or suite not in sizes:
                continue
            flags = ["--hw", _stage_hw(root, job["uses"]), "--suite", suite]
            flags += ["--partition-model-file", model_path or MODEL]
            if given.get("timeout_per_file"):
                flags += ["--timeout-per-file", str(given["timeout_per_file"])]
            for i in range(sizes[suite]):
                part = ["--auto-partition-id", str(i), "--auto-partition-size", str(sizes[suite])]
                calls.append(Call(f"{suite} ({i}/{sizes[suite]})", flags[:4] + part + flags[4:]))
    return calls


def inline_calls(root: Path) -> list[Call]:
    """`run_suite.py` calls written out in pr-test*.yml steps, without expressions."""
    calls = []
    for path in sorted((root / ".github" / "workflows").glob("pr-test*.yml")):
        text = re.sub(r"\\[ \t]*\n", " ", path.read_text(encoding="utf-8"))
        for line in text.splitlines():
            found = re.search(r"run_suite\.py\s+(--hw\s.*)$", line)
            if found is None or "${{" in found.group(1) or "$" in found.group(1):
                continue
            argv = [w.strip("\"'") for w in found.group(1).split()]
            argv = argv[: next((i for i, w in enumerate(argv) if w in ("||", "&&", "|", "#")),
                               len(argv))]  # fmt: skip
            suite = argv[argv.index("--suite") + 1] if "--suite" in argv[:-1] else ""
            if re.fullmatch(r"[A-Za-z0-9_.-]+", suite):
                calls.append(Call(f"{suite} ({path.name})", argv))
    return calls


def _without_timeout(argv: list[str]) -> list[str]:
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word == "--timeout-per-file":
            skip = True
        else:
            out.append(word)
    return out


def _same(theirs: list[dict], mine: list[dict]) -> str | None:
    """None when the files, order and timeouts agree, else the first difference."""
    if [f["file"] for f in theirs] != [f["file"] for f in mine]:
        return f"files differ (sglang {len(theirs)}, ci-budget {len(mine)})"
    for a, b in zip(theirs, mine, strict=True):
        if float(a["timeout"]) != float(b["timeout"]):
            return f"{a['file']}: timeout sglang {a['timeout']}, ci-budget {b['timeout']}"
    return None


def compare_calls(root: Path, calls: list[Call]) -> tuple[list[tuple], list[str]]:
    """(table rows, differences) for every call."""
    with one_scan():
        return _compare_calls(root, calls)


def _compare_calls(root: Path, calls: list[Call]) -> tuple[list[tuple], list[str]]:
    rows, diffs = [], []
    for call, theirs in zip(calls, listings(root, [c.argv for c in calls]), strict=True):
        for how, argv in (("drop-in", call.argv), ("zero config", _without_timeout(call.argv))):
            why = _same(theirs, run_files(root, argv))
            if why:
                diffs.append(f"{call.label}, {how}: {why}")
        limits = sorted({float(f["timeout"]) for f in theirs})
        shown = ", ".join(f"{t:.0f} s" for t in limits) or "-"
        ok = not any(d.startswith(f"{call.label},") for d in diffs)
        rows.append((call.label, f"{len(theirs)} files, timeout {shown}",
                     "identical, in order" if ok else "differs"))  # fmt: skip
    return rows, diffs
