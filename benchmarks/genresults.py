"""Deterministic result files for the ingest benchmarks.

- `write_json_report`: a pytest-json-report file shaped like pytest-json-report 1.5 writes it
  (nodeid, lineno, outcome, keywords, setup/call/teardown with durations, crash/traceback/
  longrepr on failures, user_properties on some tests, collectors), over sglang-like paths with
  classes, parametrised tests and module-level tests.
- `write_shards`: ci-budget `RunResults` JSON files, one per shard, with per-class timings.

Fixed seeds: the same arguments give byte-identical files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

AREAS = ("models", "quant", "lora", "spec", "radix_cache", "openai_server", "ep", "kernels")
PARAMS = ("bf16", "fp8", "tp2-dp1", "a::b/c", "chunk=512", "seq[1024]")


def _path(i: int) -> str:
    return f"test/registered/{AREAS[i % len(AREAS)]}/test_area_{i:05d}.py"


def _phase(rnd: random.Random, mean: float, outcome: str = "passed") -> dict:
    return {"duration": round(rnd.expovariate(1 / mean), 6), "outcome": outcome}


def _nodeids(rnd: random.Random, path: str, n: int) -> list[tuple[str, list[str]]]:
    """n nodeids for one file: a few classes (one nested), parametrised and module tests."""
    out = []
    classes = [f"TestGroup{c}" for c in range(rnd.randint(1, 4))]
    classes.append("TestOuter::TestInner")
    for k in range(n):
        test = f"test_case_{k:03d}"
        if k % 7 == 3:
            test += f"[{PARAMS[k % len(PARAMS)]}-{k}]"
        if k % 11 == 5:
            nodeid, scope = f"{path}::{test}", []
        else:
            cls = classes[(k * len(classes)) // n]
            nodeid, scope = f"{path}::{cls}::{test}", cls.split("::")
        keywords = [test.split("[")[0], *reversed(scope), path.rsplit("/", 1)[-1], "sglang", ""]
        out.append((nodeid, keywords))
    return out


def _collectors(path: str, nodeids: list[str]) -> list[dict]:
    """json-report's collectors for one module: the module's items, then each class's tests."""
    children: dict[str, list[dict]] = {path: []}
    for lineno, nodeid in enumerate(nodeids, 10):
        parent = nodeid.split("[", 1)[0].rsplit("::", 1)[0]
        chain = []  # classes not seen yet, innermost first (TestOuter::TestInner nests)
        while parent not in children:
            chain.append(parent)
            parent = parent.rsplit("::", 1)[0]
        for cls in reversed(chain):
            children[parent].append({"nodeid": cls, "type": "Class"})
            children[cls] = []
            parent = cls
        item = {"nodeid": nodeid, "type": "TestCaseFunction", "lineno": lineno}
        children[parent].append(item)
    return [{"nodeid": k, "outcome": "passed", "result": v} for k, v in children.items()]


def json_report(tests: int, files: int, seed: int = 7) -> dict:
    rnd = random.Random(seed)
    per_file = tests // files
    items, collectors = [], [{"nodeid": "", "outcome": "passed", "result": []}]
    summary = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for f in range(files):
        path = _path(f)
        collectors[0]["result"].append({"nodeid": path, "type": "Module"})
        count = per_file + (1 if f < tests - per_file * files else 0)
        nodeids = _nodeids(rnd, path, count)
        collectors += _collectors(path, [n for n, _ in nodeids])
        for lineno, (nodeid, keywords) in enumerate(nodeids, 10):
            item = {"nodeid": nodeid, "lineno": lineno, "outcome": "passed", "keywords": keywords}
            roll = rnd.random()
            setup = _phase(rnd, 2.0 if lineno == 10 else 0.01)
            item["setup"] = setup
            if roll < 0.01:  # setup error: no call phase
                setup["outcome"] = "failed"
                setup["longrepr"] = "fixture 'server' failed\nE   RuntimeError: port in use"
                item["outcome"] = "error"
            elif roll < 0.04:
                item["setup"]["outcome"] = "skipped"
                setup["longrepr"] = "('x.py', 12, 'Skipped: needs 8 GPUs')"
                item["outcome"] = "skipped"
            else:
                call = _phase(rnd, 1.5)
                if roll < 0.06:
                    call["outcome"] = "failed"
                    call["crash"] = {
                        "path": "/usr/lib/python3.10/unittest/case.py",
                        "lineno": 866,
                        "message": f"AssertionError: {rnd.random():.6f} != 0.5",
                    }
                    call["traceback"] = [
                        {"path": path, "lineno": lineno + 2, "message": "AssertionError"}
                    ]
                    call["longrepr"] = "self = <Test>\n\n>   self.assertEqual(x, 0.5)\nE   ..."
                    item["outcome"] = "failed"
                item["call"] = call
            if rnd.random() < 0.1:
                item["user_properties"] = [{"kl": round(rnd.random(), 6)}, {"tok_s": 1234.5}]
            item["teardown"] = _phase(rnd, 0.005)
            summary[item["outcome"]] += 1
            items.append(item)
    summary.update(total=len(items), collected=len(items))
    return {
        "created": 1795991369.84,
        "duration": sum(
            t[w]["duration"] for t in items for w in ("setup", "call", "teardown") if w in t
        ),
        "exitcode": 1,
        "root": "/sgl-workspace/sglang",
        "environment": {},
        "summary": summary,
        "collectors": collectors,
        "tests": items,
    }


def write_json_report(path: Path, tests: int, files: int, seed: int = 7) -> int:
    """Write the report (compact, as json-report does) and return its size in bytes."""
    text = json.dumps(json_report(tests, files, seed))
    path.write_text(text, encoding="utf-8")
    return len(text)


def _class(rnd: random.Random, name: str, tests: int) -> dict:
    cases = []
    for k in range(tests):
        cases.append(
            {
                "nodeid": f"{name}::test_{k}",
                "outcome": "passed",
                "setup": round(rnd.random(), 4),
                "call": round(rnd.expovariate(1 / 20), 4),
                "teardown": round(rnd.random() / 10, 4),
            }
        )
    total = sum(c["setup"] + c["call"] + c["teardown"] for c in cases)
    setup, teardown = cases[0]["setup"], cases[-1]["teardown"]
    return {
        "name": name,
        "class_setup": setup,
        "tests": max(0.0, total - setup - teardown),
        "class_teardown": teardown,
        "total": total,
        "passed": tests,
        "test_cases": cases,
    }


def shard(index: int, shards: int, files: int, classes: int, tests: int, seed: int = 11) -> dict:
    rnd = random.Random(seed * 1000 + index)
    suite = "base-b-test-1-gpu-large"
    out = []
    for f in range(files):
        path = _path(index * files + f)
        cls = [_class(rnd, f"{path}::TestC{c}", tests) for c in range(classes)]
        elapsed = sum(c["total"] for c in cls) + rnd.uniform(5, 30)
        status = "timeout" if rnd.random() < 0.01 else "passed"
        out.append(
            {
                "path": path,
                "suite": suite,
                "est_time": 300.0,
                "elapsed": round(elapsed, 3),
                "exit_code": 0 if status == "passed" else -9,
                "status": status,
                "timeout": 600.0,
                "classes": cls,
                "unattributed": round(elapsed - sum(c["total"] for c in cls), 3),
            }
        )
    return {
        "schema_version": 1,
        "meta": {
            "suites": [suite],
            "partition": f"{index}/{shards}",
            "runner_config": "1-gpu-large",
            "commit": "0" * 40,
            "host": f"gpu-{index:02d}",
            "gpu": {"name": "NVIDIA H200", "compute_capability": "9.0", "arch": "sm90"},
            "started_at": "2026-01-01T00:00:00Z",
            "finished_at": "2026-01-01T00:30:00Z",
        },
        "files": out,
    }


def write_shards(
    directory: Path, shards: int, files: int, classes: int = 3, tests: int = 4
) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(shards):
        path = directory / f"results-{i:02d}.json"
        path.write_text(json.dumps(shard(i, shards, files, classes, tests)), encoding="utf-8")
        paths.append(path)
    return paths


def registrations_for(paths: list[str], est_time: float = 300.0):
    """Registrations of the generated files, so the report joins every result."""
    from ci_budget.models import Registration

    return [
        Registration(
            file=p,
            line=5,
            function="register_cuda_ci",
            backend="cuda",
            est_time=est_time + (i % 9) * 100,
            suite="base-b-test-1-gpu-large",
            stage="base-b",
            runner_config="1-gpu-large",
        )
        for i, p in enumerate(paths)
    ]
