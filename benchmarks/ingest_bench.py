"""Results ingest: a large pytest-json-report file, and many shard results files.

json report — baseline: `json.load` + a plain Python pass (per-class sums in dicts).
ci-budget: `results.load_json_reports` + `budget.build_report` +
`render.markdown`, in-process; and `ci-budget report --json-report --format json` as a whole
process in a checkout holding the report's registered files, against the baseline as a process:
its time, and its peak resident size (interpreter included) against the file's size. Shards — baseline: `json.load` + `RunResults.model_validate` per file;
ci-budget: `results.load_results` + `build_report` + `markdown`.

Peak memory is measured in a fresh child process per path: its peak resident size (`VmHWM` of
/proc/self/status) at the end minus its resident size (`VmRSS`) after its imports, i.e. what the
work added on top of the interpreter. (`ru_maxrss` is no use here: Linux carries the parent's
peak into a forked child.)
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, best_of
from benchmarks.genresults import _path, registrations_for, write_json_report, write_shards


def _plain_pass(path: Path) -> int:
    """The baseline: whole-file json.load, then class sums in plain dicts."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    classes: dict[str, list[float]] = {}
    for test in data["tests"]:
        nodeid = test["nodeid"]
        head, _, rest = nodeid.partition("::")
        parts = rest.split("[", 1)[0].split("::")
        name = head + "::" + "::".join(parts[:-1]) if len(parts) > 1 else head
        total = sum(test[w]["duration"] for w in ("setup", "call", "teardown") if w in test)
        classes.setdefault(name, [0.0, 0])[0] += total
        classes[name][1] += 1
    return len(classes)


def _ours_json(path: Path, regs, copy: Path | None = None) -> tuple[int, str]:
    from ci_budget.budget.status import build_report
    from ci_budget.config import Config
    from ci_budget.render.run_md import markdown
    from ci_budget.render.text import json_chunks
    from ci_budget.workspace.files import load_json_reports

    report = build_report(regs, load_json_reports([str(path)]), Config())
    if copy is not None:  # the report's .json copy, as `report` writes it
        with open(copy, "w", encoding="utf-8") as handle:
            handle.writelines(json_chunks(report))
    return sum(len(line.classes) for line in report.lines), markdown(report)


# `ci-budget report` in this process, then its peak resident size (fresh after exec).
_CLI = (
    "import sys\nfrom ci_budget.cli import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
    "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
    "    sys.stderr.write('\\nPEAK_KB ' + (hwm[0].split()[1] if hwm else '0') + '\\n')\n"
)
_PLAIN = (
    "import sys\nfrom benchmarks.ingest_bench import _plain_pass\n_plain_pass(sys.argv[1])\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
    "sys.stderr.write('\\nPEAK_KB ' + (hwm[0].split()[1] if hwm else '0') + '\\n')\n"
)


def _process(argv: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MiB) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK_KB ")]
    return wall, cpu, int(peak[-1].split()[1]) / 1024 if peak else 0.0


def _project(root: Path, files: int) -> None:
    """A checkout whose registered files are the report's: `report` joins every result."""
    (root / ".git").mkdir(parents=True)
    for i in range(files):
        test = root / _path(i)
        test.parent.mkdir(parents=True, exist_ok=True)
        est = 300 + (i % 9) * 100
        test.write_text(
            f'register_cuda_ci(est_time={est}, suite="base-b-test-1-gpu-large")\n\n'
            "def test_case():\n    pass\n"
        )


def whole_process(
    report: Path, tests: int, files: int, size_mb: float, repeat: int
) -> tuple[Row, Row]:
    """`ci-budget report --json-report` as a process, against json.load + the plain pass as
    a process; the checkout holds the report's registered files (so the scan is counted).
    Its time, and its peak resident size (interpreter included) against the file's size."""
    root = report.parent / "checkout"
    _project(root, files)
    plain = [sys.executable, "-c", _PLAIN, str(report)]
    ours = [sys.executable, "-c", _CLI, "report", "--json-report", str(report)]
    ours += ["--format", "json", "--out", str(root / "out" / "report.md")]
    bench_root = Path(__file__).resolve().parents[1]
    base = min(_process(plain, bench_root) for _ in range(max(1, repeat)))
    runs = [_process(ours, root) for _ in range(max(1, repeat))]
    best = min(runs)
    peak = max(r[2] for r in runs)
    time_row = Row(
        f"report --json-report: {tests:,} tests (whole process)",
        base[0],
        best[0],
        peak,
        f"{best[1]:.2f}s CPU (baseline {base[1]:.2f}s); load {os.getloadavg()[0]:.1f}; "
        f"{files} registered files scanned; --format json (the .json copy printed too); "
        f"peak resident {peak:.0f} MiB = {peak / size_mb:.2f}x the {size_mb:.1f} MiB file",
        limit=1.5,
    )
    memory_row = Row(
        "report --json-report: whole-process peak / file",
        base[2] / size_mb,
        peak / size_mb,
        peak,
        f"VmHWM of the whole process, interpreter and imports included: ci-budget {peak:.0f} "
        f"MiB, baseline (json.load + the plain pass) {base[2]:.0f} MiB",
        unit="x",
        limit=2.0,
    )
    return time_row, memory_row


def _baseline_shards(paths: list[Path]) -> int:
    from ci_budget.models import RunResults

    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            runs.append(RunResults.model_validate(json.load(handle)))
    return sum(len(r.files) for r in runs)


def _ours_shards(paths: list[Path], regs) -> tuple[int, str]:
    from ci_budget.budget.status import build_report
    from ci_budget.config import Config
    from ci_budget.render.run_md import markdown
    from ci_budget.workspace.files import load_results

    report = build_report(regs, load_results([str(p) for p in paths]), Config())
    return len(report.lines), markdown(report)


def _status_kb(key: str) -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux: the best there is


def child(what: str, inputs: list[str], files: int) -> None:
    """In a fresh process: imports first, then the measured work; prints added peak KiB."""
    import ci_budget.budget.status  # noqa: F401
    import ci_budget.render.run_md  # noqa: F401
    import ci_budget.workspace.files  # noqa: F401

    regs = registrations_for([_path(i) for i in range(files)])
    paths = [Path(p) for p in inputs]
    start = _status_kb("VmRSS")
    if what == "json-baseline":
        _plain_pass(paths[0])
    elif what == "json-ours":
        _ours_json(paths[0], regs, Path(inputs[0]).with_name("child-report.json"))
    elif what == "shards-baseline":
        _baseline_shards(paths)
    else:
        _ours_shards(paths, regs)
    print(json.dumps({"added_kb": _status_kb("VmHWM") - start}))


def _child_mb(what: str, inputs: list[Path], files: int) -> float:
    code = (
        "import sys; from benchmarks.ingest_bench import child; "
        "child(sys.argv[1], sys.argv[3:], int(sys.argv[2]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, what, str(files), *map(str, inputs)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.splitlines()[-1])["added_kb"] / 1024


def run(
    tests: int = 100_000,
    files: int = 2_000,
    shards: int = 50,
    shard_files: int = 40,
    repeat: int = 3,
) -> list[Row]:
    from ci_budget.results.timings import file_results_from_json_report
    from ci_budget.workspace.files import load_json_reports, read_json

    rows = []
    with tempfile.TemporaryDirectory(prefix="ci-budget-ingest-") as tmp:
        report = Path(tmp) / "report.json"
        t0 = time.perf_counter()
        size = write_json_report(report, tests, files)
        generated = time.perf_counter() - t0
        regs = registrations_for([_path(i) for i in range(files)])
        base = best_of(repeat, lambda: _plain_pass(report))
        ours = best_of(repeat, lambda: _ours_json(report, regs))
        # Correctness: the streamed results equal the whole-file path's, field for field.
        streamed = load_json_reports([str(report)])[0].files
        whole = file_results_from_json_report(read_json(report))
        same = streamed == whole and ours.value[0] == base.value
        base_mb = _child_mb("json-baseline", [report], files)
        ours_mb = _child_mb("json-ours", [report], files)
        size_mb = size / 2**20
        rows.append(
            Row(
                f"json report ingest: {tests:,} tests -> report",
                base.seconds,
                ours.seconds,
                ours_mb,
                f"in-process: load + report + markdown; {size_mb:.1f} MiB file (generated in "
                f"{generated:.1f}s), {base.value} classes, markdown {len(ours.value[1]):,} chars; "
                f"identical to whole-file path: {same}; peak MiB added (child VmHWM - VmRSS after "
                f"imports, the .json copy written too): json.load baseline {base_mb:.0f}, "
                f"ci-budget {ours_mb:.0f} = {ours_mb / size_mb:.1f}x the file",
                ok=same,
            )
        )
        rows.extend(whole_process(report, tests, files, size_mb, repeat))
        rows.append(
            Row(
                "json report ingest: peak memory / file size",
                base_mb / size_mb,
                ours_mb / size_mb,
                ours_mb,
                "",
                unit="x",
                limit=2.0,
            )
        )
        paths = write_shards(Path(tmp) / "shards", shards, shard_files)
        shard_regs = registrations_for([_path(i) for i in range(shards * shard_files)])
        base = best_of(repeat, lambda: _baseline_shards(paths))
        ours = best_of(repeat, lambda: _ours_shards(paths, shard_regs))
        ours_mb = _child_mb("shards-ours", paths, shards * shard_files)
        rows.append(
            Row(
                f"shard merge: {shards} x {shard_files} files -> report",
                base.seconds,
                ours.seconds,
                ours_mb,
                f"{sum(p.stat().st_size for p in paths) / 2**20:.1f} MiB in {shards} files; "
                f"{ours.value[0]} report lines (expected {shards * shard_files})",
                ok=ours.value[0] == shards * shard_files == base.value,
                limit=2.0,
            )
        )
    return rows
