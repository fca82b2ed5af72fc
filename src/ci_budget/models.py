"""Data passed between modules. Models hold data only; rendering lives in `render`.

First the units: seconds and percentages as every report, comment and message writes them
(`790s`, `4.2s`, `+190s`, `32%`, `+32%`), the one formatter, below every layer that writes numbers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

SCHEMA_VERSION = 1


# ==== Units ====


def secs(value: float | None, sign: str = "") -> str:
    """Seconds as every report and message writes them: `4.2s`, `1,234s` (`sign="+"`: `+190s`),
    `-` for none."""
    if value is None:
        return "-"
    if abs(value) < 10:  # class setup and small files: whole seconds would read as 0s
        return f"{value:{sign}.1f}s"
    return f"{value:{sign},.0f}s"


def pct(ratio: float | None, sign: str = "") -> str:
    """A ratio as a percentage: `32%` (`sign="+"`: `+32%`), `-` for none."""
    return "-" if ratio is None else f"{ratio * 100:{sign}.0f}%"


# ==== Data ====


# Numbers and paths in result files and artifacts come from jobs that ran a PR's code: a time is
# finite, not negative and small enough to add up; a path fits a file system's.
MAX_SECONDS = 1e9  # about 31 years
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_SECONDS, le=MAX_SECONDS)]
PathText = Annotated[str, Field(max_length=4096)]

FileStatus = Literal["passed", "failed", "timeout", "crashed", "cancelled", "not-run"]
BudgetStatus = Literal[
    "ok", "near", "over", "timeout", "failed", "flaky", "stale", "cancelled", "not-run"
]


class Data(BaseModel):
    # Result files may come from a newer ci-budget: unknown keys are ignored, not fatal.
    model_config = ConfigDict(extra="ignore", defer_build=True)


class Problem(Data):
    """An error or warning tied to a place in a file."""

    file: str
    line: int = 0
    col: int = 0
    message: str

    def __str__(self) -> str:
        if not self.line:  # about the whole file, not a place in it
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.col}: {self.message}"


class Registration(Data):
    """One top-level `register_*_ci(...)` call."""

    file: str  # repo-relative, forward slashes
    line: int
    col: int = 0
    function: str
    backend: str
    est_time: float
    suite: str  # effective suite
    stage: str | None = None
    runner_config: str | None = None
    nightly: bool = False
    disabled: str | None = None
    in_process_group: str | None = None

    @property
    def enabled(self) -> bool:
        return self.disabled is None


class RegistryScan(Data):
    registrations: list[Registration] = Field(default_factory=list)
    errors: list[Problem] = Field(default_factory=list)
    warnings: list[Problem] = Field(default_factory=list)


# Test cases and classes are slotted dataclasses rather than models: a 100,000-test report
# holds 100,000 of them, and a model's instance dict each came to half the report file's size.
@dataclass(slots=True, config=ConfigDict(extra="ignore", defer_build=True))
class TestTiming:
    """One test case: its phases' durations and its outcome."""

    __test__ = False  # a data model, not a test class for pytest to collect

    nodeid: str
    outcome: str = "passed"  # passed / failed / skipped / error / running
    setup: Finite = 0.0
    call: Finite = 0.0
    teardown: Finite = 0.0
    user_properties: dict[str, Any] = Field(default_factory=dict)
    message: str | None = None

    @property
    def total(self) -> float:
        return self.setup + self.call + self.teardown


@dataclass(slots=True, config=ConfigDict(extra="ignore", defer_build=True))
class ClassTiming:
    """A test class (`path::Class`) or, for module-level tests, the module (`path`)."""

    name: str
    class_setup: Finite = 0.0  # first test's setup: where setUpClass runs
    tests: Finite = 0.0  # everything between
    class_teardown: Finite = 0.0  # last test's teardown: where tearDownClass runs
    total: Finite = 0.0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    complete: bool = True  # False when a timeout/crash cut the class short
    test_cases: list[TestTiming] = Field(default_factory=list)


class Attempt(Data):
    """One run of a file that ran more than once (`run --enable-retry`)."""

    status: FileStatus
    elapsed: Seconds = 0.0
    reason: str | None = None  # a failed attempt: why it ran again, and its message


class FileResult(Data):
    path: PathText
    suite: str | None = None
    est_time: Seconds | None = None
    elapsed: Seconds = 0.0
    exit_code: int | None = None
    status: FileStatus = "not-run"
    timeout: Seconds | None = None  # the limit the runner applied
    classes: list[ClassTiming] = Field(default_factory=list)
    unattributed: Seconds = 0.0  # wall - sum(classes): interpreter start, imports, collection
    in_flight: str | None = None  # test running when a timeout or crash hit
    message: str | None = None
    selection: list[str] = Field(default_factory=list)  # ::Class / ::Class::test narrowing
    # What tests printed that matches the value pattern (`avg_kl_div=1.2e-06`), by node id.
    printed: dict[str, list[str]] = Field(default_factory=dict)
    # Every attempt, oldest first, when the file ran more than once (`elapsed`: the last one's)
    attempts: list[Attempt] = Field(default_factory=list)


class GpuInfo(Data):
    name: str
    compute_capability: str | None = None  # "9.0"
    arch: str | None = None  # "sm90"
    count: int = Field(default=1, ge=0, le=4096)
    source: str = "nvidia-smi"


class RunMeta(Data):
    suites: list[str] = Field(default_factory=list)
    specs: list[str] = Field(default_factory=list)
    partition: str | None = None  # "i/n", 0-based i
    runner_config: str | None = None
    configured_arch: str | None = None
    commit: str | None = None
    repository: str | None = None  # owner/name the run's checkout is of (GITHUB_REPOSITORY)
    runner_labels: list[str] = Field(default_factory=list)
    host: str | None = None
    gpu: GpuInfo | None = None
    mode: str = "pytest"
    python: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    tool_version: str | None = None


class RunResults(Data):
    schema_version: int = SCHEMA_VERSION
    meta: RunMeta = Field(default_factory=RunMeta)
    files: list[FileResult] = Field(default_factory=list)


class BudgetLine(Data):
    file: str
    suite: str
    line: int = 0  # registration line, for annotations
    est_time: float
    measured: float | None = None
    ratio: float | None = None
    headroom: float | None = None  # est_time - measured
    status: BudgetStatus = "not-run"
    suggestion: int | None = None
    file_status: FileStatus = "not-run"
    in_flight: str | None = None
    classes: list[ClassTiming] = Field(default_factory=list)
    unattributed: float = 0.0
    gpus: int = 0
    gpu_seconds: float = 0.0
    message: str | None = None
    planned: float | None = None  # the seconds CI plans this file on (model, p90 or est_time)
    planned_from: str | None = None  # model / p90 / estimate / est_time
    p90: float | None = None  # the history's p90 of passing runs (with --history)
    n: int = 0  # passing runs in the history
    attempts: list[Attempt] = Field(default_factory=list)  # a retried file's, oldest first


class SuiteTotal(Data):
    suite: str
    files: int = 0
    est_total: float = 0.0
    measured_total: float = 0.0
    over: int = 0
    near: int = 0
    timeouts: int = 0
    failed: int = 0
    gpu_seconds: float = 0.0


class ArchCell(Data):
    raw: str = ""
    values: list[float] = Field(default_factory=list)
    na: bool = False  # n/a, -, or empty


class ArchRow(Data):
    file: str
    line: int  # line of the row in the file
    table_line: int = 0  # first line of the table's header
    group: str | None = None  # fix id, carried down from the group's first row
    case: str
    reverted: dict[str, ArchCell] = Field(default_factory=dict)  # arch -> cell
    fixed: ArchCell | None = None
    ci_arch: str | None = None
    flags: list[str] = Field(default_factory=list)
    measured: dict[str, float] = Field(default_factory=dict)  # user_properties from this run


class GuardValue(Data):
    """One table row's values from `guard verify` on one architecture."""

    group: str | None = None
    case: str
    line: int = 0  # the row's line in the file
    reverted: Finite | None = None
    fixed: Finite | None = None


class GuardVerification(Data):
    """What `guard verify` measured: enough to fill the table again from the file's text."""

    file: str
    arch: str
    reverted: list[str] = Field(default_factory=list)  # the refs, as reverted
    group: str | None = None
    commit: str | None = None
    values: list[GuardValue] = Field(default_factory=list)
    flagged: list[ArchRow] = Field(default_factory=list)


class MatrixRow(Data):
    name: str
    runner_config: str
    runs_on: list[str]
    suite: str | None = None
    backend: str | None = None  # run --backend, when the suite has registrations of several
    specs: list[str] = Field(default_factory=list)
    partition: str | None = None  # "i/n"
    revert: list[str] = Field(default_factory=list)  # /verify-guard: fixes to revert
    max_parallel: int | None = None  # the suite's shards that may run at once
    install: str | None = None  # the runner config's install script (RunnerConfig.install)
    # the shard's predicted wall (`PlanNumbers.shard_wall`) and the stage timeout it runs
    # under; shown by `plan`, never part of the workflow matrix
    predicted_wall: float | None = None
    timeout_s: float | None = None


class Plan(Data):
    should_run: bool = False
    reason: str = ""
    # rerun-test / verify-guard / run-ci / pull-request / dispatch / none
    trigger: str = "none"
    matrix: list[MatrixRow] = Field(default_factory=list)
    head_sha: str | None = None
    pr_number: int | None = None
    reply: str | None = None  # text for the PR, when the trigger wants an answer
    reaction: str | None = None  # "eyes" / "confused"
    comment_id: int | None = None  # the comment a /rerun-test reaction goes to
    reply_once: str | None = None  # a key: the reply is posted once per key and PR
    notice: str | None = None  # the PR's one `approval` comment, updated in place
    unlabel: list[str] = Field(default_factory=list)  # gating labels whose approval lapsed


class Report(Data):
    kind: str = "run"  # sticky-comment kind
    title: str = "ci-budget"
    meta: list[RunMeta] = Field(default_factory=list)
    lines: list[BudgetLine] = Field(default_factory=list)
    suites: list[SuiteTotal] = Field(default_factory=list)
    arch_rows: list[ArchRow] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)
    warnings: list[Problem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    # the results are not of the checkout the budgets were read from: "commit abc (checkout
    # def)", "repository a/b (checkout c/d)"; the headline says so
    elsewhere: list[str] = Field(default_factory=list)
