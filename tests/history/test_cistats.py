"""`history add` on sglang-ci-stats run files: real files from the public data repository
(tests/fixtures/sglang-ci-stats, see its SOURCES.md), a clone-shaped directory, reruns that
grow a file, and bad input (one line each; the good files still count)."""

import json
import shutil
import subprocess
from pathlib import Path

from helpers.cli import cli

from ci_budget.history.cistats import is_run_file, parse_run
from ci_budget.workspace.files import load_history

RUNS = Path(__file__).parents[1] / "fixtures" / "sglang-ci-stats" / "runs"
SUITE = "base-c-test-4-gpu-h100"
PP = "test/registered/pp/test_pp_single_node.py"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return cli("history", *args, cwd=cwd, timeout=60)


def _show(store: Path, cwd: Path) -> dict:
    proc = _cli("show", "--history", str(store), "--format", "json", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return {(s["file"], s["suite"]): s for s in json.loads(proc.stdout)}


def test_real_run_files_give_nearest_rank_p90_over_passing_runs(tmp_path: Path):
    store = tmp_path / "h.json"
    files = sorted(str(p) for p in RUNS.glob("*.json"))
    proc = _cli("add", *files, "--history", str(store), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stats = _show(store, tmp_path)
    pp = stats[(PP, SUITE)]
    # 06-19: 492 s, 06-20: 428 s, 06-21: 526 s; nearest rank: p90 = 3rd of 3, p50 = 2nd
    assert (pp["n"], pp["p50"], pp["p90"], pp["max"]) == (3, 492.0, 526.0, 526.0)
    assert pp["last_commit"] == "4f5ff39bc96da933dd938afc4382793c943ce631"
    deepep = stats[("test/registered/ep/test_deepep_small.py", "base-c-test-deepep-4-gpu-h100")]
    assert (deepep["n"], deepep["p50"], deepep["p90"]) == (3, 477.0, 615.0)  # 477, 615, 456
    again = _cli("add", *files, "--history", str(store), cwd=tmp_path)
    assert again.returncode == 0 and "0 sample(s) added" in again.stdout  # keyed by run/job


def test_samples_carry_partition_date_labels_and_passed_defaults(tmp_path: Path):
    run = parse_run(json.loads((RUNS / "2026-06-21T23-32-06Z__27921006369.json").read_text()))
    assert run.run_id == 27921006369 and run.shard_counts()[SUITE] == 3
    job = next(j for j in run.jobs if j.suite == SUITE and j.shard == 1)
    assert job.wall == 20 * 60 + 25 and all(t.passed for t in job.timings)  # no `passed` key
    store = tmp_path / "h.json"
    _cli("add", str(RUNS / "2026-06-21T23-32-06Z__27921006369.json"), "--history", str(store),
         cwd=tmp_path)  # fmt: skip
    [sample] = load_history(store).samples(PP, SUITE)
    assert sample.partition == "1/3" and sample.labels == ["4-gpu-h100"]
    assert sample.run == f"ci-stats:27921006369:{job.job_id}:1" and sample.status == "passed"
    assert sample.date.isoformat() == "2026-06-21T23:52:48+00:00"


def test_failed_entries_do_not_count_and_a_grown_file_adds_only_its_new_jobs(tmp_path: Path):
    data = json.loads((RUNS / "2026-06-20T11-40-28Z__27870064391.json").read_text())
    first = dict(data, jobs=data["jobs"][:1])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(first))
    store = tmp_path / "h.json"
    assert _cli("add", str(path), "--history", str(store), cwd=tmp_path).returncode == 0
    grown = json.loads(json.dumps(data))
    grown["jobs"][1]["timings"][0]["passed"] = False  # a failed attempt's capped time
    path.write_text(json.dumps(grown))
    proc = _cli("add", str(path), "--history", str(store), cwd=tmp_path)
    assert proc.returncode == 0
    added = sum(len(j["timings"]) for j in data["jobs"][1:])
    assert f"{path}: {added} new sample(s)" in proc.stdout
    failed = grown["jobs"][1]["timings"][0]
    stats = load_history(store).stats(failed["file"], grown["jobs"][1]["suite"])
    assert (stats.runs, stats.n, stats.failed, stats.p90) == (1, 0, 1, None)


def test_a_clone_directory_with_a_truncated_file_and_a_directory_with_none(tmp_path: Path):
    clone = tmp_path / "sglang-ci-stats"
    shutil.copytree(RUNS, clone / "runs")
    (clone / "model.json").write_text(json.dumps({"est": {}, "fit": {}}))  # not a run: skipped
    broken = clone / "runs" / "2026-06-23T00-00-00Z__1.json"
    broken.write_text((RUNS / "2026-06-19T12-21-53Z__27825399090.json").read_text()[:900])
    store = tmp_path / "h.json"
    proc = _cli("add", str(clone), "--history", str(store), cwd=tmp_path)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"error: {broken}:") and "not valid JSON" in line
    assert f"{clone}: 4 file(s) read, 42 new sample(s)" in proc.stdout  # the others count
    empty = tmp_path / "empty"
    (empty / "runs").mkdir(parents=True)
    (empty / "README.json").write_text("{}")
    proc = _cli("add", str(empty), "--history", str(store), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: {empty}: no ci-budget results or sglang-ci-stats run files in it\n"
    )


def test_a_named_file_of_another_shape_or_with_a_bad_field_is_one_line(tmp_path: Path):
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    data = json.loads((RUNS / "2026-06-19T12-21-53Z__27825399090.json").read_text())
    data["jobs"][2]["timings"][1]["elapsed"] = "soon"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    good = RUNS / "2026-06-21T23-32-06Z__27921006369.json"
    store = tmp_path / "h.json"
    proc = _cli("add", str(other), str(bad), str(good), "--history", str(store), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {other}: neither a ci-budget results file (no schema_version) nor an "
        "sglang-ci-stats run file (no run_id and jobs list)",
        f"error: {bad}: not a usable sglang-ci-stats run file: "
        "jobs[2].timings[1].elapsed: not a number of seconds: 'soon'",
    ]
    assert load_history(store).stats(PP, SUITE).n == 1  # the good file still counts


def test_max_samples_keeps_the_newest_runs(tmp_path: Path):
    store = tmp_path / "h.json"
    files = sorted(str(p) for p in RUNS.glob("*.json"))
    proc = _cli(
        "add", *reversed(files), "--history", str(store), "--max-samples", "2", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    samples = load_history(store).samples(PP, SUITE)
    assert [s.elapsed for s in samples] == [428.0, 526.0]  # 06-20 and 06-21; 06-19 dropped


def test_shape_recognition():
    assert is_run_file({"run_id": 1, "jobs": []})
    assert not is_run_file({"schema_version": 1, "files": []})
    assert not is_run_file({"run_id": 1, "jobs": {}})
