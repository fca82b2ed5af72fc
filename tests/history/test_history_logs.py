"""TIMINGS blocks from job logs: the parser on synthetic logs in the real format, samples from
jobs, partition-model seeds, and `history import --from` on files, directories and zips."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from helpers.cli import cli
from helpers.registry import reg
from synthlogs import Ran, job_log

from ci_budget.app.import_runs import Progress
from ci_budget.history.imports import JobInfo, add_job, model_estimates, partition_sizes, seed
from ci_budget.history.logs import job_suite, parse_log, timings_block
from ci_budget.history.model import History
from ci_budget.models import FileResult
from ci_budget.sharding.model import PlanNumbers, parse_model
from ci_budget.workspace.history_store import load_history

T0 = datetime(2026, 8, 21, 10, 0, tzinfo=timezone.utc)
SUITE = "base-b-test-1-gpu-large"
A, B, C = (f"test/registered/x/test_{n}.py" for n in "abc")


def _parse(text: str):
    return parse_log(text.splitlines())


def test_the_block_run_writes_is_the_block_import_reads():
    files = [
        FileResult(path=A, status="passed", elapsed=12.34),
        FileResult(path=B, status="failed", elapsed=3.0),
        FileResult(path=C, status="not-run"),
    ]
    log = "python3 run_suite.py --suite base-b-test-1-gpu-large\n" + timings_block(files)
    found = _parse(log)
    assert found.problems == [] and found.blocks == 1
    assert [(e.file, e.status, e.elapsed, e.suite) for e in found.entries] == [
        (A, "passed", 12.0, SUITE),  # whole seconds, as run_suite.py writes them
        (B, "failed", 3.0, SUITE),
    ]


def test_block_with_timestamps_retries_and_a_timeout():
    files = [Ran(A, 655), Ran(B, 300, retried=True), Ran(C, 1800, passed=False, timed_out=True)]
    got = _parse(job_log(T0, SUITE, files, index=3, size=8))
    assert got.problems == [] and got.blocks == 1
    assert [(e.file, e.status, e.elapsed) for e in got.entries] == [
        (A, "passed", 655.0),
        (B, "passed", 300.0),
        (C, "timeout", 1800.0),  # passed: false plus run_suite's final TIMEOUT line
    ]
    assert {(e.suite, e.partition) for e in got.entries} == {(SUITE, "3/8")}  # command line
    assert got.begin_stamps[0].startswith("2026-08-21T") and got.last_stamp


def test_a_traceback_naming_run_suite_keeps_the_command_lines_suite():
    text = job_log(T0, SUITE, [Ran(A, 100)], index=1, size=2)
    head, sep, tail = text.partition("========== TIMINGS BEGIN")
    noise = '2026-08-21T11:00:00.0000000Z   File "/w/test/run_suite.py", line 300, in main\n'
    (entry,) = _parse(head + noise + sep + tail).entries
    assert (entry.suite, entry.partition) == (SUITE, "1/2")


def test_two_blocks_keep_the_latest_entry_per_file():
    got = _parse(job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], blocks=2))
    assert got.blocks == 2 and got.problems == []
    assert [(e.file, e.elapsed) for e in got.entries] == [(A, 101.0), (B, 201.0)]


def test_truncated_log_keeps_complete_lines_and_says_so():
    got = _parse(job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], cut_in_block=True))
    assert [e.file for e in got.entries] == [A]
    messages = [p.message for p in got.problems]
    assert any("not a timing entry: not JSON" in m for m in messages)  # the half line
    assert any("not closed" in m and "kept its 1 complete entries" in m for m in messages)


def test_a_number_python_will_not_convert_is_a_problem_not_a_crash():
    # Test output is untrusted: a 5,000-digit elapsed is valid JSON that json.loads refuses
    # with a plain ValueError (int conversion limit), not a JSONDecodeError.
    huge = json.dumps({"file": B, "elapsed": 0}).replace("0}", "1" * 5000 + "}")
    got = _parse(job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], malformed=huge))
    assert [e.file for e in got.entries] == [A, B]
    (problem,) = got.problems
    assert "not a timing entry: not readable JSON (Exceeds the limit" in problem.message


def test_malformed_line_is_named_and_the_rest_kept():
    text = job_log(T0, SUITE, [Ran(A, 100), Ran(B, 200)], malformed='{"file": 5, "elapsed": 1}')
    got = _parse(text)
    assert [e.file for e in got.entries] == [A, B]
    (problem,) = got.problems
    lines = text.splitlines()
    assert "::" not in problem.message.split(": ", 1)[0]
    assert problem.message.startswith("not a timing entry: 'file' is not a path")
    assert '{"file": 5' in lines[problem.line - 1]  # the line number points at it


def test_untrusted_text_is_escaped_and_bad_values_refused():
    bad = [
        '{"file": "a.py\\n::error::x", "passed": true, "elapsed": 1}',
        '{"file": "a.py", "passed": "yes", "elapsed": 1}',
        '{"file": "a.py", "passed": true, "elapsed": -1}',
        "::add-mask::secret\u2028",
    ]
    got = _parse(
        "\n".join(
            ["========== TIMINGS BEGIN ==========", *bad, "========== TIMINGS END =========="]
        )
    )
    assert got.entries == [] and len(got.problems) == 4
    assert all("\n" not in p.message and "\u2028" not in p.message for p in got.problems)


def test_no_block_and_stray_end():
    got = _parse("2026-08-21T10:00:00.0000000Z hello\n========== TIMINGS END ==========\n")
    assert got.entries == []
    assert [p.message for p in got.problems] == [
        "TIMINGS END without a BEGIN; ignored",
        "no TIMINGS block in 2 lines",
    ]


def test_job_names_give_suite_and_partition():
    assert job_suite("base-b-test-1-gpu-large (3)") == (SUITE, "3")
    assert job_suite(f"{SUITE} / {SUITE} (3)") == (SUITE, "3")  # a reusable workflow's job
    assert job_suite("unit-test-backend-1-gpu (0, 1-gpu-runner)") == (
        "unit-test-backend-1-gpu",
        "0",
    )
    assert job_suite("check-changes") == ("check-changes", None)
    names = [f"{SUITE} ({i})" for i in range(4)] + ["check-changes"]
    assert partition_sizes(names) == {SUITE: 4}


def test_job_samples_carry_the_jobs_record_and_are_idempotent():
    history = History()
    job = JobInfo(id=77, name=f"{SUITE} (1)", conclusion="success", head_sha="f" * 40,
                  runner_name="h100-7", labels=("self-hosted", "1-gpu-large"), completed_at=T0)  # fmt: skip
    timings = _parse(job_log(T0, SUITE, [Ran(A, 655)], echo_command=False))
    added = add_job(history, "job:77", job, timings, {SUITE: 4})
    assert added.samples == 1 and add_job(history, "job:77", job, timings, {SUITE: 4}).samples == 0
    (sample,) = history.samples(A, SUITE)
    assert (sample.partition, sample.host, sample.commit, sample.date) == (
        "1/4",
        "h100-7",
        "f" * 40,
        T0,
    )
    assert sample.labels == ["self-hosted", "1-gpu-large"] and sample.run == "job:77"
    cancelled = JobInfo(id=78, name=f"{SUITE} (2)", conclusion="cancelled")
    failing = _parse(job_log(T0, SUITE, [Ran(B, 30, passed=False)], echo_command=False))
    add_job(history, "job:78", cancelled, failing, {SUITE: 4})
    assert history.samples(B, SUITE)[0].status == "cancelled"
    assert history.stats(B, SUITE).failed == 0


def test_partition_model_seeds_only_where_nothing_was_measured():
    model = {"est": {SUITE: {A: 400, B: 90.5, C: "slow"}}, "fit": {}, "n_runs": 12}
    parsed, problems = parse_model(model, "model.json")
    assert problems == [
        f"model.json: est.{SUITE}: 1 value(s) not a number of seconds (first: {C}); "
        "those files use est_time"
    ]
    estimates = model_estimates(parsed.est, "model.json")
    history = History()
    add_job(history, "job:1", JobInfo(1, SUITE), _parse(job_log(T0, SUITE, [Ran(A, 650)])))
    assert seed(history, estimates) == 1  # A has a sample; B is seeded
    assert history.estimate(A, SUITE) is None and history.estimate(B, SUITE) == 90.5
    regs = [reg(f, 10, SUITE) for f in (A, B, C)]
    # C has neither: it weighs its registration's own est_time (no entry)
    assert PlanNumbers(history=history).weights(regs) == {(A, SUITE): 650.0, (B, SUITE): 90.5}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return cli("history", "import", *args, cwd=cwd, timeout=60)


def test_from_files_directory_and_zip(tmp_path: Path):
    logs = tmp_path / "logs"
    (logs / f"{SUITE} (0)").mkdir(parents=True)
    full = job_log(T0, SUITE, [Ran(A, 655), Ran(B, 100)], echo_command=False)
    (logs / f"0_{SUITE} (0).txt").write_text(full)
    # the same block again as the step's own log inside the job folder: added once
    (logs / f"{SUITE} (0)" / "5_Run test.txt").write_text(full)
    (logs / "1_check-changes.txt").write_text("2026-08-21T10:00:00.0000000Z nothing here\n")
    truncated = job_log(T0, SUITE, [Ran(C, 30), Ran(B, 1)], index=1, size=2, cut_in_block=True)
    (logs / f"2_{SUITE} (1).txt").write_text(truncated)
    store = tmp_path / "h.json"
    proc = _cli("--from", str(logs), "--history", str(store), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # some logs had problems; the rest is kept
    assert "1_check-changes.txt: no TIMINGS block in 1 lines" in proc.stderr
    assert f"2_{SUITE} (1).txt:" in proc.stderr and "not closed" in proc.stderr
    history = load_history(store)
    assert [s.elapsed for s in history.samples(A, SUITE)] == [655.0]
    assert history.samples(C, SUITE)[0].partition == "1/2"
    assert "3 new sample(s)" in proc.stdout
    again = _cli("--from", str(logs), "--history", str(store), cwd=tmp_path)
    assert "0 new sample(s)" in again.stdout
    archive = tmp_path / "run-logs.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"0_{SUITE} (0).txt", full)
        zf.writestr("3_other (0).txt", job_log(T0, "base-a-test-cpu", [Ran(A, 5)]))
    zipped = _cli("--from", str(archive), "--history", str(store), cwd=tmp_path)
    assert zipped.returncode == 0, zipped.stderr
    assert "1 new sample(s)" in zipped.stdout  # only the cpu suite's A is new
    assert load_history(store).samples(A, "base-a-test-cpu")[0].elapsed == 5.0


def test_from_needs_a_suite_when_nothing_names_one(tmp_path: Path):
    log = tmp_path / "job.log"
    log.write_text(job_log(T0, SUITE, [Ran(A, 10)], echo_command=False).replace(" ", " ", 0))
    store = tmp_path / "h.json"
    # the file name is the only job name there is: it becomes the suite unless --suite says
    proc = _cli("--from", str(log), "--history", str(store), "--suite", SUITE, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert load_history(store).samples(A, SUITE)
    seeded = tmp_path / "model.json"
    seeded.write_text(json.dumps({"est": {SUITE: {B: 77}}}))
    proc = _cli("--from", str(log), "--history", str(store), "--partition-model", str(seeded),
                cwd=tmp_path)  # fmt: skip
    assert "1 partition-model estimate(s) in use" in proc.stdout


def test_progress_rewrites_one_line_on_a_terminal_and_prints_lines_elsewhere():
    term = io.StringIO()
    progress = Progress(term, tty=True, every=0)
    progress.counts("runs 1/2")
    progress.line("job 1: a problem")
    progress.counts("runs 2/2")
    progress.done()
    assert term.getvalue() == (
        "\r\x1b[Kruns 1/2\r\x1b[Kjob 1: a problem\n\r\x1b[Kruns 2/2\r\x1b[Kruns 2/2\n"
    )
    plain = io.StringIO()
    progress = Progress(plain, tty=False)
    progress.counts("runs 1/2")
    progress.line("run 7 (attempt 1): 10 job(s)")
    progress.done()
    assert plain.getvalue() == "run 7 (attempt 1): 10 job(s)\n"
