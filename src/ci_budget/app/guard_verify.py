"""Use case `guard verify`: run a guard file with its fixes reverted, then as it is, on this
GPU, and fill the detected architecture's columns of its measured table.

Both runs happen in one temporary worktree of HEAD (the reverted run first, then the same
checkout reset to HEAD), with ci-budget's runner; the filled table is computed against the
file as it is in the caller's tree, which `--write` edits in place.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ci_budget.app.sandboxing import (
    env_drop_option,
    env_keep_option,
    interpreter,
    open_sandbox,
    sandbox_cache_option,
    sandbox_expose_option,
    sandbox_network_option,
    sandbox_option,
    sandbox_policy,
)
from ci_budget.app.settings import AppError, Sink, option
from ci_budget.arch.docstrings import (
    SILENT,
    SILENT_ALL,
    UNVERIFIED,
    class_names,
    flag_rows,
    parse_source,
)
from ci_budget.arch.fill import fill_values
from ci_budget.arch.layout import normalize_arch
from ci_budget.arch.match import attach_measured
from ci_budget.config import Config
from ci_budget.models import (
    ArchRow,
    GuardValue,
    GuardVerification,
    Problem,
    RunMeta,
    RunResults,
)
from ci_budget.registry.parse import scan_source
from ci_budget.runner.command import tests_env
from ci_budget.runner.preflight import detect_gpu
from ci_budget.runner.run import Job, RunSetup, run_jobs
from ci_budget.runner.sandbox import probe_wrap
from ci_budget.workspace.files import read_source, repo_relative, write_source
from ci_budget.workspace.git import GitError, head_worktree, reset, revert, toplevel

STILL_FLAGGED = (UNVERIFIED, SILENT, SILENT_ALL)


@dataclass
class VerifyOptions:
    file: str = option(flag=None, help="guard test file with a measured table in a docstring")
    revert: list[str] = option(
        list, nargs="+", required=True, metavar="REF",
        help="commit or patch file of each fix to revert",
    )  # fmt: skip
    group: str | None = option(
        None, metavar="FIX", help="table group of the fix (default: from REF)"
    )
    arch: str | None = option(None, help="architecture (default: the GPU found on this machine)")
    force_arch: bool = option(
        False, needs="write",
        help="let --write file the values under --arch although this machine's GPU is another "
        "architecture or none",
    )  # fmt: skip
    python: str | None = option(None, help="interpreter the tests run with (default: this one)")
    timeout_per_file: float | None = option(
        None, metavar="S", help="per-run timeout in seconds (default: the config's file timeout)"
    )
    write: bool = option(False, help="edit FILE's docstring in place")
    results_dir: Path | None = option(
        None, metavar="DIR",
        help="write reverted.json and fixed.json (the two runs' results) and verification.json "
        "(the values by row) there",
    )  # fmt: skip
    sandbox: str = sandbox_option()
    sandbox_expose: list[str] = sandbox_expose_option()
    sandbox_network: str = sandbox_network_option()
    sandbox_cache: list[str] = sandbox_cache_option()
    env_drop: list[str] = env_drop_option()
    env_keep: list[str] = env_keep_option()


class GuardError(Exception):
    """Bad input for guard verify; the message names the file or ref."""


@dataclass
class Verification:
    rel: str
    arch: str
    reverted: list[str]  # what was reverted, as described by `revert`
    group: str | None
    source: str  # the file with both columns filled
    tables: list[tuple[int, list[str]]]  # (file line, lines) of each table filled
    rows: list[ArchRow]  # flagged, as `guard check` flags them
    problems: list[Problem] = field(default_factory=list)
    runs: dict[str, RunResults] = field(default_factory=dict)
    values: dict[tuple[str | None, str], GuardValue] = field(default_factory=dict)

    def flagged(self) -> list[ArchRow]:
        return [r for r in self.rows if any(f in STILL_FLAGGED for f in r.flags)]


def infer_group(described: list[str], groups: set[str]) -> str | None:
    """The table group a reverted ref names (`#34184` for `fixes/34184.patch` or a commit
    subject `Fix #34184: ...`), when exactly one group matches."""
    numbers = {n for text in described for n in re.findall(r"\d{3,}", text)}
    found = {g for g in groups if set(re.findall(r"\d{3,}", g)) & numbers}
    return found.pop() if len(found) == 1 else None


def _job(rel: str, source: str, config: Config) -> Job:
    regs = [r for r in scan_source(source, rel, config).registrations if r.enabled]
    top = max(regs, key=lambda r: r.est_time) if regs else None
    return Job(path=rel, est_time=top.est_time if top else 600.0, suite=top.suite if top else None)


def _run(tree_root: Path, job: Job, config: Config, python: str, meta: RunMeta, stream, extra_path,
         timeout=None, sandbox=None):  # fmt: skip
    from ci_budget.app.run import RunOptions

    defaults = RunOptions()
    with tempfile.TemporaryDirectory(prefix="ci-budget-guard-run-") as tmp:
        setup = RunSetup(root=tree_root, config=config, out=Path(tmp) / "results.json",
                         artifacts_dir=Path(tmp) / "artifacts", python=python, mode=config.mode,
                         timeout_per_file=timeout, grace=defaults.grace,
                         heartbeat=defaults.heartbeat, fail_fast=False,
                         pythonpath=tuple(extra_path), stream=stream,
                         sandbox=sandbox)  # fmt: skip
        return run_jobs([job], [], meta.model_copy(deep=True), setup)


def run_arch(config: Config, arch: str | None, gpu) -> tuple[str, str | None]:
    """(the architecture the values are filed under, why it is not this machine's, or None)."""
    amap = config.gpu_arch_map()
    here = normalize_arch(gpu.arch or "", amap) if gpu is not None else None
    if arch is None:
        if here is None:
            raise GuardError("no GPU architecture detected on this machine; pass --arch")
        return here, None
    chosen = normalize_arch(arch, amap)
    if chosen is None:
        raise GuardError(f"--arch {arch!r}: not an architecture (sm90, SM100, H200, ...)")
    if here == chosen:
        return chosen, None
    if gpu is None:
        machine = "this machine has no GPU (the tests take their CPU path)"
    else:
        machine = f"this machine's GPU is {gpu.name} ({here or 'an unknown architecture'})"
    return chosen, f"--arch {chosen}: {machine}; its values are not {chosen}'s"


def verify(root: Path, config: Config, rel: str, refs: list[str], *, python: str,
           arch: str | None = None, group: str | None = None, cwd: Path | None = None,
           stream: TextIO | None = None, timeout: float | None = None,
           sandbox=None, on_mismatch=None) -> Verification:  # fmt: skip
    """Run `rel` with each of `refs` reverted, then unreverted, and fill the table (under
    `arch`, else the architecture of the GPU found here). `sandbox`: the tests' sandbox
    (runner.sandbox.Sandbox), opened by the caller, or None. `on_mismatch(why)` before any run
    when `arch` is not this machine's."""
    amap = config.gpu_arch_map()
    source = read_source(root / rel)
    rows, problems, _ = parse_source(source, rel, amap)
    if not rows:
        raise GuardError(f"{rel}: no measured table in its docstrings")
    # The torch probe runs the tests' interpreter: the tests' environment, in their sandbox.
    env = tests_env(config.env_drop, config.env_keep)
    wrap = probe_wrap(sandbox, root)
    gpu = detect_gpu(amap, python=python, env=env, wrap=wrap)
    chosen, mismatch = run_arch(config, arch, gpu)
    if mismatch and on_mismatch is not None:
        on_mismatch(mismatch)
    meta = RunMeta(specs=[rel], gpu=gpu, mode=config.mode, python=python)
    job = _job(rel, source, config)
    try:
        repo = toplevel(root)
        sub = root.resolve().relative_to(repo.resolve())
        with head_worktree(repo) as tree:
            described = [revert(tree, ref, cwd or Path.cwd(), sub.as_posix()) for ref in refs]
            extra = [str(tree / d) for d in config.arch.pythonpath if (tree / d).is_dir()]
            args = (job, config, python, meta, stream, extra, timeout, sandbox)
            runs = {"reverted": _run(tree / sub, *args)}
            reset(tree)
            runs["fixed"] = _run(tree / sub, *args)
    except GitError as exc:
        raise GuardError(str(exc)) from None
    group = group or infer_group(described, {r.group for r in rows if r.group})
    out = Verification(rel, chosen, described, group, source, [], [], problems, runs)
    _fill(out, config, class_names(source))
    return out


def _fill(out: Verification, config: Config, classes: set[str]) -> None:
    """Match each run's values to rows, then write them into the file's table."""
    amap = config.gpu_arch_map()
    for kind in ("reverted", "fixed"):
        rows, _, _ = parse_source(out.source, out.rel, amap)
        attach_measured(
            rows, [out.runs[kind]], out.arch, problems=out.problems, arch_map=amap,
            pattern=config.arch.value_pattern, mapping=config.arch.rows,
            classes={out.rel: classes}, group=out.group if kind == "reverted" else None,
            one_fix=kind == "reverted",
        )  # fmt: skip
        for row in (r for r in rows if out.arch in r.measured):
            value = out.values.setdefault((row.group, row.case),
                                          GuardValue(group=row.group, case=row.case, line=row.line))  # fmt: skip
            setattr(value, kind, row.measured[out.arch])
    out.source, out.tables, problems = fill_values(
        out.source, out.rel, list(out.values.values()), out.arch, amap
    )
    out.problems.extend(problems)
    rows, _, _ = parse_source(out.source, out.rel, amap)
    out.rows = flag_rows(rows, out.arch)


def unrun(out: Verification) -> list[str]:
    """A run in which no test of the file ran (an import error, a crash before collection):
    its rows read "silent" or "unverified" only because nothing was measured."""
    lines = []
    for kind, run in out.runs.items():
        ran = sum(c.passed + c.failed for f in run.files for c in f.classes)
        if not ran:
            f = next(iter(run.files), None)
            why = (f.message or f.status) if f is not None else "not run"
            lines.append(f"{out.rel}: the {kind} run ran no test ({why}): its rows were not "
                         "measured, the table says nothing about this architecture")  # fmt: skip
    return lines


def record(out: Verification, commit: str | None = None) -> GuardVerification:
    """The verification as data: values by row, for a later fill of the file's own text."""
    return GuardVerification(
        file=out.rel, arch=out.arch, reverted=out.reverted, group=out.group, commit=commit,
        values=list(out.values.values()), flagged=out.flagged(),
    )  # fmt: skip


def guard_verify(settings, options: VerifyOptions, sink: Sink | None = None) -> int:
    """Print the filled table and the rows still flagged; exit 1 when no table was filled or
    a run ran no test."""
    import sys

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    rel = repo_relative(root, options.file)
    if not (root / rel).is_file():
        raise AppError(f"{options.file}: no such file")
    python = interpreter(options.python) if options.python else sys.executable
    policy = sandbox_policy(options)
    box, _ = open_sandbox(root, config, policy, python, settings.env.in_actions, sink.warn)

    def mismatch(why: str) -> None:
        if options.write and not options.force_arch:
            raise GuardError(f"{why}; refusing --write (--force-arch writes them anyway)")
        sink.warn(why)

    try:
        result = verify(root, config, rel, options.revert, python=python, arch=options.arch,
                        group=options.group, cwd=Path.cwd(), stream=sink.stderr,
                        timeout=options.timeout_per_file, sandbox=box,
                        on_mismatch=mismatch)  # fmt: skip
    except GuardError as exc:
        raise AppError(str(exc)) from None
    finally:
        if box is not None:
            box.close()
    sink.echo(f"{rel}: {result.arch}, reverted {'; '.join(result.reverted)}"
              f" (rows of {result.group or 'every fix'})")  # fmt: skip
    for line, lines in result.tables:
        sink.echo(f"{rel}:{line}:")
        sink.echo("\n".join(lines))
    for problem in result.problems:
        sink.warn(str(problem))
    missing = unrun(result)
    for why in missing:
        sink.warn(why)
    for row in result.flagged():
        sink.echo(f"{row.file}:{row.line}: {row.group or ''} {row.case}: {', '.join(row.flags)}")
    if options.results_dir is not None:
        _save(options.results_dir, result, root, sink)
    if options.write and result.source != read_source(root / rel):
        write_source(root / rel, result.source)
        sink.note(f"wrote {rel}")
    return 0 if result.tables and not missing else 1


def _save(where: Path, result: Verification, root: Path, sink: Sink) -> None:
    from ci_budget.runner.outcome import write_results
    from ci_budget.workspace.git import head_commit

    for name, run in result.runs.items():
        write_results(run, where / f"{name}.json")
    data = record(result, head_commit(root)).model_dump_json(indent=2)
    (where / "verification.json").write_text(data + "\n", encoding="utf-8")
    sink.note(f"wrote {where}/reverted.json, fixed.json, verification.json")
