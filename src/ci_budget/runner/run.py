"""Run registered test files, one process each, with per-file timeouts; record what happened.

Each file runs through `sandbox.contain`: in the tests' sandbox (its own PID namespace, ended
with the file) or, without one, in a new session under `proctree.ProcessTree`; either way nothing
the file started survives it, and a file that left processes to kill is failed. The tests write their reports
into a folder of their own; ci-budget copies them out as capped data (`outcome`). Results are
written after every file (temp file + rename), so a job killed later keeps every number
measured so far.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from ci_budget.config import Config
from ci_budget.models import Attempt, FileResult, RunMeta, RunResults, secs
from ci_budget.render.escape import log_text
from ci_budget.results.printed import timings_block
from ci_budget.runner import command, outcome
from ci_budget.runner.command import (
    artifact_stem,
    command_line,
    file_env,
    prepare_plugin_dir,
    step_file_env,
)
from ci_budget.runner.outcome import (
    RetryRules,
    file_result,
    read_lines,
    retry_reason,
    write_results,
)
from ci_budget.runner.proctree import ProcessTree, SandboxedTree, child_subreaper
from ci_budget.runner.sandbox import Sandbox, contain
from ci_budget.sharding.select import Job, SelectionError, Skipped


class Terminated(KeyboardInterrupt):
    """SIGTERM to ci-budget (a cancelled job): handled like Ctrl-C, so files are cleaned up."""


class Interrupted(BaseException):
    """Carries the partial result of the file that was running when ci-budget was stopped."""

    def __init__(self, result: FileResult):
        super().__init__(result.path)
        self.result = result


def _on_sigterm(signum, frame):
    raise Terminated


@dataclass
class RunSetup:
    """How the files run: resolved by the use case from its options (which own the defaults)."""

    root: Path
    config: Config
    out: Path
    artifacts_dir: Path
    python: str
    mode: str
    timeout_per_file: float | None
    grace: float
    heartbeat: float
    fail_fast: bool
    pythonpath: tuple[str, ...] = ()  # put before the tests' own PYTHONPATH
    poll: float = 0.25
    retry: RetryRules | None = None  # run_suite.py --enable-retry
    stream: TextIO | None = None  # progress lines; default stdout
    sandbox: Sandbox | None = None  # opened by the caller, for the whole run
    env_add: dict[str, str] = field(default_factory=dict)  # what the install step set


def resolve_path(path: str, root: Path) -> str:
    """A spec's path as given on the command line -> repo-relative (it must exist)."""
    p = Path(path)
    if not p.is_absolute() and (root / p).exists():
        return (root / p).resolve().relative_to(root.resolve()).as_posix()
    candidate = p if p.is_absolute() else Path.cwd() / p
    try:
        resolved = candidate.resolve()
        if resolved.exists():
            return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        pass
    raise SelectionError(f"spec path {path!r}: no such file under {root}")


def skipped_result(item: Skipped) -> FileResult:
    """A disabled file, recorded as not run with its reason."""
    return FileResult(path=item.path, suite=item.suite, est_time=item.est_time,
                      status="not-run", message=f"disabled: {item.reason}")  # fmt: skip


def _pump(src, sinks: list[tuple[TextIO, bool]], last: list[str]) -> None:
    """Copy the file's output to each sink; `True` marks the job log, where the test's output
    (PR code) must not read as a workflow command. The artifact log keeps it as printed."""
    for raw in iter(src.readline, b""):
        text = raw.decode("utf-8", errors="replace")
        last[:] = [text[-1:]]
        for sink, console in sinks:
            try:
                sink.write(log_text(text) if console else text)
                sink.flush()
            except (OSError, ValueError):
                pass


def _watch(tree: ProcessTree | SandboxedTree, job: Job, opts: RunSetup, limit: float, start: float,
           live, progress_file: Path, say: Callable[[str], None], tag: str) -> bool:  # fmt: skip
    """Wait for the file's process: live progress or heartbeat lines meanwhile; True when it
    ran past `limit`."""
    next_beat = start + opts.heartbeat
    while True:
        now = time.monotonic()
        wait = min(opts.poll, max(0.0, start + limit - now))
        try:
            tree.proc.wait(timeout=wait)
            return False
        except subprocess.TimeoutExpired:
            pass
        tree.record_descendants()
        now = time.monotonic()
        if now - start >= limit:
            return True
        if live is not None:
            test = command.current_test(outcome.tail(progress_file.parent, progress_file.name))
            live.show(command.line(tag, job.path, now - start, job.est_time, test))
        elif now >= next_beat:
            say(f"{tag} ... still running {job.path} {now - start:.0f}s / {job.est_time:.0f}s")
            next_beat += opts.heartbeat


def run_file(job: Job, opts: RunSetup, plugin_dir: Path | None, say: Callable[[str], None],
             tag: str, out: Path) -> FileResult:  # fmt: skip
    """`out`: the folder the tests write their reports into (theirs: read back as data)."""
    art = opts.artifacts_dir
    stem = artifact_stem(job.path)
    for suffix in (".json", ".jsonl", ".progress.jsonl", ".log"):
        (art / (stem + suffix)).unlink(missing_ok=True)
    outcome.clear(out)
    limit = job.timeout or opts.config.timeout_for(job.est_time, job.suite, opts.timeout_per_file)
    cmd, cwd = command_line(job, opts, out)
    progress_file = out / (stem + ".progress.jsonl")
    env = file_env(opts, plugin_dir, progress_file)
    say(f"{tag} START {job.path} (est {job.est_time:.0f}s, timeout {limit:.0f}s)")
    log = open(art / (stem + ".log"), "w", encoding="utf-8")  # noqa: SIM115
    start = time.monotonic()
    pinned = [str(opts.out), str(opts.artifacts_dir)]
    tree = contain(opts.sandbox, cmd, cwd, env, opts.root, opts.grace, pinned)
    last: list[str] = []
    stream = opts.stream or sys.stdout
    live = command.LiveLine(stream) if command.is_live(stream) else None
    # A terminal gets the live line instead of the output.
    sinks = [(log, False)] if live else [(stream, True), (log, False)]
    pump = threading.Thread(target=_pump, args=(tree.proc.stdout, sinks, last), daemon=True)
    pump.start()
    timed_out, interrupted = False, None
    try:
        timed_out = _watch(tree, job, opts, limit, start, live, progress_file, say, tag)
    except BaseException as exc:  # Ctrl-C, job cancelled: the file's processes must go too
        interrupted = exc
    elapsed = time.monotonic() - start
    kill_epoch = time.time()
    kill = timed_out or interrupted is not None
    stragglers = tree.terminate(opts.grace) if kill else tree.cleanup(opts.grace)
    pump.join(timeout=5)
    log.close()
    if live is not None:
        live.clear()
    elif last and last[0] != "\n":  # keep our status line off the end of pytest's dots
        say("")
    refused = outcome.collect(out, art, stem)
    result = file_result(job, opts, art, stem, tree.returncode, kill, elapsed, kill_epoch)
    result.timeout = limit
    for note in refused:
        result.message = f"{result.message}; {note}" if result.message else note
    if interrupted is not None:
        result.status = "cancelled"
        how = "SIGTERM" if isinstance(interrupted, Terminated) else "SIGINT"
        result.message = f"cancelled after {secs(elapsed)} ({how})"
        raise Interrupted(result) from interrupted
    if stragglers and not timed_out:
        # What a file leaves running holds GPUs and ports the next file needs: a failure.
        names = tree.leftover_names
        note = f"killed {len(stragglers)} leftover process(es) after the file ended" + (
            f" ({', '.join(names)})" if names else ""
        )
        if result.status == "passed":
            result.status = "failed"
        result.message = f"{result.message}; {note}" if result.message else note
    return result


def _attempts(job: Job, opts: RunSetup, plugin_dir, say, tag: str, out: Path) -> FileResult:
    """The file's last attempt: with retries on, a retriable failure runs again."""
    rules = opts.retry
    attempt = 1
    attempts: list[Attempt] = []
    while True:
        res = run_file(job, opts, plugin_dir, say, tag, out)
        attempts.append(Attempt(status=res.status, elapsed=res.elapsed))
        pct = f" ({100 * res.elapsed / job.est_time:.0f}%)" if job.est_time else ""
        tail = f" - {res.message}" if res.message else ""
        say(f"{tag} {res.status.upper()} {job.path} {res.elapsed:.1f}s / "
            f"{job.est_time:.0f}s{pct}{tail}")  # fmt: skip
        log = opts.artifacts_dir / (artifact_stem(job.path) + ".log")
        if res.status != "passed" and command.is_live(opts.stream or sys.stdout):
            for text in command.log_tail(log):  # the output a terminal did not see live
                say(f"    {text}")
            say(f"    (full output: {log})")
        if rules is None or attempt >= rules.max_attempts:
            break
        why = retry_reason(rules, res.status, "\n".join(read_lines(log)))
        if why is None:
            break
        attempts[-1].reason = f"{why}: {res.message}" if res.message else why
        attempt += 1
        say(f"{tag} RETRY {job.path}: {why}; attempt {attempt}/{rules.max_attempts} "
            f"in {rules.wait:.0f}s")  # fmt: skip
        time.sleep(rules.wait)
    if attempt > 1 and rules is not None:
        note = f"attempt {attempt} of {rules.max_attempts}"
        res.message = f"{res.message}; {note}" if res.message else note
        res.attempts = attempts
    return res


def _run_all(jobs, results: RunResults, opts: RunSetup, plugin_dir, say, out: Path) -> None:
    stop = False
    for i, job in enumerate(jobs, 1):
        tag = f"[{i}/{len(jobs)}]"
        if stop:
            res = FileResult(path=job.path, suite=job.suite, est_time=job.est_time,
                             status="not-run", message="not run: an earlier file failed "
                             "(--continue-on-error runs the rest)")  # fmt: skip
        else:
            res = _attempts(job, opts, plugin_dir, say, tag, out)
            stop = opts.fail_fast and res.status != "passed"
        results.files.append(res)
        results.meta.finished_at = datetime.now(timezone.utc)
        write_results(results, opts.out)


def run_jobs(
    jobs: list[Job], skipped: list[FileResult], meta: RunMeta, opts: RunSetup
) -> RunResults:
    stream = opts.stream or sys.stdout

    def say(line: str) -> None:  # paths, leftover names, failures: the PR's text
        stream.write(log_text(line) + "\n")
        stream.flush()

    opts.artifacts_dir.mkdir(parents=True, exist_ok=True)
    meta.started_at = datetime.now(timezone.utc)
    results = RunResults(meta=meta, files=list(skipped))
    write_results(results, opts.out)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        with tempfile.TemporaryDirectory(prefix="ci-budget-run-") as tmp, child_subreaper():
            box = opts.sandbox
            lib, out = (box.lib, box.out) if box else (Path(tmp) / "lib", Path(tmp) / "out")
            plugin_dir = prepare_plugin_dir(lib / "plugins") if opts.mode == "pytest" else None
            _run_all(jobs, results, opts, plugin_dir, say, out)
    except Interrupted as exc:
        results.files.append(exc.result)
        say(f"CANCELLED {exc.result.path} - {exc.result.message}")
        raise (exc.__cause__ or exc) from None
    finally:
        results.meta.finished_at = datetime.now(timezone.utc)
        write_results(results, opts.out)
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    stream.write(log_text(timings_block(results.files)))
    stream.flush()
    return results


def install(cmd: str, root: Path, env: dict, sandbox: Sandbox | None, stream: TextIO,
            limit: float = 3600.0) -> tuple[int, dict[str, str]]:  # fmt: skip
    """The PR's install step (`bash -c CMD` from the repository root), in the tests' sandbox:
    it writes into the interpreter's prefix, $HOME and the caches through the run's layers,
    which the files see next and which go with the run. (Its exit status (124: timed out),
    what it wrote to a GITHUB_ENV and GITHUB_PATH of its own, for the files.)"""
    cmd_argv = ["bash", "-c", cmd]
    steps = Path(tempfile.mkdtemp(dir=sandbox.out if sandbox else None))
    files = {k: steps / k.lower() for k in ("GITHUB_ENV", "GITHUB_PATH")}
    for path in files.values():
        path.write_text("")
    env = {**env, **{k: str(v) for k, v in files.items()}}
    tree = contain(sandbox, cmd_argv, root, env, root, grace=5.0)
    pump = threading.Thread(target=_pump, args=(tree.proc.stdout, [(stream, True)], []),
                            daemon=True)  # fmt: skip
    pump.start()
    try:
        tree.proc.wait(timeout=limit)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    except BaseException:
        tree.terminate(5.0)
        raise
    if timed_out:
        tree.terminate(5.0)
    else:
        tree.cleanup(5.0)  # what it left running goes; a server it started is no install
    pump.join(timeout=5)
    rc = tree.returncode
    got = [outcome.read_capped(p.parent, p.name, 1 << 20) for p in files.values()]
    text = [x.decode(errors="replace") if isinstance(x, bytes) else "" for x in got]
    shutil.rmtree(steps, ignore_errors=True)
    return 124 if timed_out else rc if isinstance(rc, int) else 1, step_file_env(
        text[0], text[1], env
    )


def exit_status(results: RunResults) -> int:
    ran = [f for f in results.files if not (f.message or "").startswith("disabled:")]
    return 0 if all(f.status == "passed" for f in ran) else 1
