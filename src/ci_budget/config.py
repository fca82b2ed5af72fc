"""The configuration model: zero config follows sglang's conventions; `[tool.ci-budget]` or
`ci-budget.toml` overrides (read by `workspace.project`; this module only validates).

Keys are written kebab-case in TOML (`runner-configs`); a snake_case key is an error that
names the kebab-case spelling. Python code may build sections by field name.

First the sections `Config` holds (runner configs, thresholds, GitHub, retry patterns, the
planner, guard tables), then `Config` itself and its lookups, then parsing a file's table.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


def kebab(name: str) -> str:
    return name.replace("_", "-")


class Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=kebab, populate_by_name=True, defer_build=True
    )


class RunnerConfig(Section):
    runs_on: list[str] = Field(default_factory=list)  # labels; default [self-hosted, NAME]
    gpus: int = Field(1, ge=0)  # GPUs per runner
    arch: str | None = None  # the GPU architecture CI runs on, "sm90"
    # The script the repository's CI runs on this runner to install the code under test
    # (sglang: runner_configs.yml's `install`), repository-relative; a run job runs it first.
    install: str | None = None

    @field_validator("install")
    @classmethod
    def _repository_path(cls, v: str | None) -> str | None:
        if v is None:
            return v
        parts = v.split("/")
        if not re.fullmatch(r"[\w.+/-]+", v) or v.startswith("/") or ".." in parts:
            raise ValueError(f"install: {v!r} is not a repository-relative path")
        return v


class Thresholds(Section):
    near: float = Field(0.8, gt=0)  # measured > near * est_time
    over: float = Field(1.0, gt=0)  # measured > over * est_time
    stale: float = Field(0.5, ge=0)  # measured < stale * est_time: budget far too generous
    margin: float = Field(0.2, ge=0)  # suggestion = measured * (1 + margin), rounded up
    round_to: int = Field(10, ge=1)  # suggestions are multiples of this many seconds

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        # Out of order, a band is empty and a status can never show: say so instead.
        if self.near >= self.over:
            raise ValueError(f"near ({self.near:g}) must be below over ({self.over:g})")
        if self.stale >= self.near:
            raise ValueError(f"stale ({self.stale:g}) must be below near ({self.near:g})")
        return self


class RerunDir(Section):
    """Unregistered test files `/rerun-test` may name (sglang's multimodal tests): they run
    on `runner`, or on the runner config of the first `path-runners` key their path contains."""

    runner: str
    path_runners: dict[str, str] = Field(default_factory=dict)


class GithubSettings(Section):
    gating_labels: dict[str, list[str]] = Field(
        default_factory=lambda: {"run-ci": list[str]()}
    )  # label -> stages, suites or suite globs it runs; [] = every stage of `backends`
    backends: list[str] = Field(default_factory=lambda: ["cuda"])  # what `[]` labels run
    # collaborator permissions that may comment a command
    allowed_permissions: list[str] = Field(default_factory=lambda: ["admin", "write"])
    allow_users: list[str] = Field(default_factory=list)  # also allowed, whatever permission
    deny_users: list[str] = Field(default_factory=list)  # never allowed
    run_drafts: bool = False  # run label and push triggers on draft PRs
    rate_limit_cap: float = Field(60.0, ge=0)  # longest sleep for a rate limit, seconds
    comment_login: str | None = None  # the identity that owns sticky comments, if known
    # specs one command may name
    max_specs: int = Field(20, ge=1)
    rerun_dirs: dict[str, RerunDir] = Field(default_factory=dict)  # repo path -> routing
    # suite -> runner configs a file of that suite without a runner_config reruns on
    rerun_suites: dict[str, list[str]] = Field(default_factory=dict)
    # The comment command ci-budget answers (`/rerun-test`; on a repository whose own
    # workflows already answer that, `/ci-budget-run`: see docs/adopting.md).
    command: str = Field("/rerun-test", pattern=r"^/[a-z][a-z0-9-]*$")
    # Who may trigger, besides the collaborator permission: sglang's file of grants, read from
    # the base branch (trigger/authz.py). "" reads none.
    permissions_file: str = ".github/CI_PERMISSIONS.json"
    # A label runs only these runner configs (None: those the repository's CI files or this
    # configuration name, else the built-in ones) and at most this many jobs.
    label_runner_configs: list[str] | None = None
    label_max_jobs: int = Field(100, ge=1)  # jobs one label may start (sglang 3c69a4c: 51)


class RetryPatterns(Section):
    """What makes a failed file worth a second run under `run --enable-retry` (regular
    expressions, searched case-insensitively in its output); sglang: read from its
    `ci_utils.py`. A timeout is always retried."""

    infra: list[str] = Field(default_factory=list)  # retried, whatever else matched
    never: list[str] = Field(default_factory=list)  # real code errors: not retried
    retriable: list[str] = Field(default_factory=list)  # accuracy, performance, flakes


class PlannerSettings(Section):
    algorithm: Literal["lpt"] = "lpt"  # sglang's; "best" went (docs/performance.md)
    safety: float = Field(0.75, gt=0, le=1)  # shards fit within timeout * safety
    max_shards: int = Field(64, ge=1)  # most shards the planner gives a suite
    # "fewest": the fewest shards whose plan fits; "sglang": ceil(coeff*sum / (safety*T - bias))
    shard_rule: Literal["fewest", "sglang"] = "fewest"


class ArchSettings(Section):
    # What a test prints for its measured value; `<number>` is the value.
    value_pattern: str = "avg_kl_div=<number>"
    # Table row label -> the test measuring it (`Class::test` or `path::Class::test`), for rows
    # whose label is not the test's name (see docs/arch-tables.md).
    rows: dict[str, str] = Field(default_factory=dict)
    # Directories of a temporary checkout put first on PYTHONPATH by `guard verify`, so the
    # tests import the reverted code rather than an installed copy (sglang: `python`).
    pythonpath: list[str] = Field(default_factory=lambda: ["python"])

    @field_validator("value_pattern")
    @classmethod
    def _one_number(cls, v: str) -> str:
        if v.count("<number>") != 1:
            raise ValueError("must contain <number> exactly once")
        return v


def _runners(arch: str | None, *names: str) -> dict[str, RunnerConfig]:
    """sglang's runner labels: `N-gpu-...` runs on N GPUs of `arch`, on a runner of that label."""
    return {
        n: RunnerConfig(runs_on=["self-hosted", n], gpus=int(n.split("-")[0]), arch=arch)
        for n in names
    }


DEFAULT_RUNNER_CONFIGS: dict[str, RunnerConfig] = {
    **_runners("sm120", "1-gpu-small"),
    **_runners("sm90", "1-gpu-large", "2-gpu-large", "4-gpu-h100", "8-gpu-h200", "8-gpu-h20"),
    **_runners("sm100", "4-gpu-b200", "8-gpu-b200"),
    "cpu": RunnerConfig(runs_on=["ubuntu-latest"], gpus=0, arch=None),
}

BACKENDS = ("cpu", "cuda", "amd", "npu", "xpu", "musa", "mlx")
DEFAULT_REGISTER_FUNCTIONS: dict[str, str] = {f"register_{b}_ci": b for b in BACKENDS}

# GPU marketing names -> architecture. Matched case-insensitively as whole words.
DEFAULT_GPU_ARCH: dict[str, str] = {
    **dict.fromkeys(("H100", "H200", "H20", "H800", "GH200"), "sm90"),
    **dict.fromkeys(("B200", "B300", "GB200", "GB300"), "sm100"),
    **dict.fromkeys(("RTX 5090", "RTX PRO 6000"), "sm120"),
    **{"A100": "sm80", "A10G": "sm86", "L4": "sm89", "L40S": "sm89"},
    **{"MI300X": "gfx942", "MI325X": "gfx942", "MI355X": "gfx950"},
}


Minutes = Annotated[float, Field(gt=0)]


class Config(Section):
    # "auto": read an sglang checkout's own CI files for the defaults; "none": never.
    profile: Literal["auto", "none"] = "auto"
    # the test files: globs from the root
    test_globs: list[str] = Field(default_factory=lambda: ["test/registered/**/*.py"])
    # file names (or paths) never scanned
    exclude: list[str] = Field(default_factory=lambda: ["conftest.py", "__init__.py"])
    test_root: str = "test/registered"  # `/rerun-test` specs may be relative to it
    register_functions: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_REGISTER_FUNCTIONS)
    )  # function name -> backend (a table here replaces the built-in list)
    registration_keywords: list[str] = Field(
        default_factory=lambda: ["stage", "runner_config", "in_process_group"]
    )  # keyword-only arguments a registration may use
    # runner configs by name, over the built-in ones (sglang: runner_configs.yml)
    runner_configs: dict[str, RunnerConfig] = Field(default_factory=dict)
    # suite (glob) -> the runner config it runs on, before its registrations' runner_config
    suite_runners: dict[str, str] = Field(default_factory=dict)
    stage_timeouts: dict[str, Minutes] = Field(default_factory=dict)  # stage -> minutes
    # suite (glob) -> minutes, before its stage's
    suite_timeouts: dict[str, Minutes] = Field(default_factory=dict)
    suite_shards: dict[str, int] = Field(default_factory=dict)  # suite (glob) -> fixed count
    # Matrix jobs of one suite running at once: "all", "third" (max(n // 3, 1)), "third-gpu"
    # (the same, but suites on runners without GPUs unthrottled), or a number.
    max_parallel: Literal["all", "third", "third-gpu"] | int = "all"
    default_stage_timeout: float = Field(60.0, gt=0)  # minutes
    thresholds: Thresholds = Field(default_factory=Thresholds)
    # Per-file timeout: seconds (run_suite.py's per-commit default, 1200) or "est-time" (the
    # scheduled rule, max(1.5 x est, est + 1800)); per suite before it.
    file_timeout: Literal["est-time"] | float = 1200.0
    # suite (glob) -> seconds or "est-time" (sglang: its workflows' timeout_per_file)
    suite_file_timeouts: dict[str, Literal["est-time"] | float] = Field(default_factory=dict)
    # "pytest": per-class timings; "script": `python3 FILE -f` from script-cwd, as sglang runs
    mode: Literal["pytest", "script"] = "pytest"
    script_cwd: str = "test"  # where script mode runs files from
    # a registered file whose `if __name__ == "__main__":` calls nothing: warning, error, ignore
    main_block: Literal["warning", "error", "ignore"] = "warning"
    gpu_arch: dict[str, str] = Field(default_factory=dict)  # GPU name -> arch, over the built-in
    # Ignored, with a warning, by the commands that run tests: in a GPU job this file is the
    # PR's. The tests' environment comes from the workflow (`run --env-drop/--env-keep`).
    env_drop: list[str] = Field(default_factory=list)
    env_keep: list[str] = Field(default_factory=list)  # ignored too (see env-drop)
    github: GithubSettings = Field(default_factory=GithubSettings)
    planner: PlannerSettings = Field(default_factory=PlannerSettings)
    retry_patterns: RetryPatterns = Field(default_factory=RetryPatterns)
    arch: ArchSettings = Field(default_factory=ArchSettings)

    @field_validator("max_parallel")
    @classmethod
    def _positive_parallel(cls, v: str | int) -> str | int:
        if not isinstance(v, str) and v < 1:
            raise ValueError("must be 'all', 'third', 'third-gpu' or a number >= 1")
        return v

    @field_validator("suite_shards")
    @classmethod
    def _positive_shards(cls, v: dict[str, int]) -> dict[str, int]:
        for name, count in v.items():
            if count < 1:
                raise ValueError(f"{name}: a shard count must be at least 1, not {count}")
        return v

    @field_validator("file_timeout")
    @classmethod
    def _positive_timeout(cls, v: str | float) -> str | float:
        if not isinstance(v, str) and not v > 0:
            raise ValueError("must be 'est-time' or a positive number of seconds")
        return v

    @field_validator("suite_file_timeouts")
    @classmethod
    def _positive_suite_timeouts(cls, v: dict) -> dict:
        for name, value in v.items():
            if not isinstance(value, str) and not value > 0:
                raise ValueError(f"{name}: must be 'est-time' or a positive number of seconds")
        return v

    # Defaults are merged under user entries so users override or add, never lose the rest.
    def runner(self, name: str | None) -> RunnerConfig | None:
        if name is None:
            return None
        merged = {**DEFAULT_RUNNER_CONFIGS, **self.runner_configs}
        return merged.get(name)

    def all_runners(self) -> dict[str, RunnerConfig]:
        return {**DEFAULT_RUNNER_CONFIGS, **self.runner_configs}

    def gpu_arch_map(self) -> dict[str, str]:
        return {**DEFAULT_GPU_ARCH, **self.gpu_arch}

    def stage_timeout_s(self, stage: str | None) -> float:
        minutes = self.stage_timeouts.get(stage or "", self.default_stage_timeout)
        return minutes * 60.0

    def suite_timeout_s(self, suite: str, stage: str | None = None) -> float:
        """The suite's own timeout (`suite-timeouts`, exact name first, then the first matching
        pattern), else its stage's."""
        minutes = _lookup(self.suite_timeouts, suite)
        return self.stage_timeout_s(stage) if minutes is None else minutes * 60.0

    def fixed_shards(self, suite: str) -> int | None:
        return _lookup(self.suite_shards, suite)

    def suite_runner(self, suite: str) -> str | None:
        return _lookup(self.suite_runners, suite)

    def max_parallel_for(self, size: int, gpus: int) -> int:
        rule = self.max_parallel
        if rule == "all" or (rule == "third-gpu" and gpus == 0):
            return size
        if rule in ("third", "third-gpu"):
            return max(size // 3, 1)
        return max(1, min(size, int(rule)))

    def timeout_for(self, est_time: float, suite: str | None = None, per_file: float | None = None,
                    from_est_time: bool = False, increase: float = 0.0) -> float:  # fmt: skip
        """The one per-file timeout rule, as run_suite.py sets it: `from_est_time`
        (--timeout-from-est-time), else `per_file` (--timeout-per-file), else the suite's own
        (`suite-file-timeouts`, read from sglang's workflows), else `file-timeout`. Each is a
        number of seconds or the est-time rule; a flat limit grows by `increase` (the retry
        increase when retries are on)."""
        own = _lookup(self.suite_file_timeouts, suite) if suite else None
        rule = None if from_est_time else per_file or own
        if from_est_time or isinstance(rule, str):
            return est_time_timeout(est_time)
        rule = self.file_timeout if rule is None else rule
        flat = est_time_timeout(est_time) if isinstance(rule, str) else float(rule)
        return flat + increase


def est_time_timeout(est_time: float) -> float:
    """sglang's scheduled rule (`--timeout-from-est-time`): max(1.5 x est, est + 1800)."""
    return max(1.5 * float(est_time), float(est_time) + 1800.0)


def _lookup(table: dict, name: str):
    """`table[name]`, else the value of the first key that is a glob pattern matching `name`."""
    if name in table:
        return table[name]
    for pattern, value in table.items():
        if fnmatch.fnmatchcase(name, pattern):
            return value
    return None


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names file and key."""


def _message(err) -> str:
    last = str(err["loc"][-1]) if err["loc"] else ""
    known = {kebab(name) for cls in Section.__subclasses__() for name in cls.model_fields}
    if err["type"] == "extra_forbidden" and kebab(last) in known:
        return f"unknown key; did you mean `{kebab(last)}`? (keys are kebab-case)"
    if err["type"] == "extra_forbidden":
        close = difflib.get_close_matches(kebab(last), sorted(known), n=1, cutoff=0.8)
        return f"unknown key; did you mean `{close[0]}`?" if close else "unknown key"
    return err["msg"].removeprefix("Value error, ")


def _format_validation(source: str, prefix: str, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"])
        where = f"{prefix}.{key}" if prefix else key
        lines.append(f"{source}: {where or prefix or '(top level)'}: {_message(err)}")
    return "\n".join(lines)


def overlay(defaults: dict, data: dict) -> dict:
    """`data` (a user's settings) over `defaults` (a repository profile), key by key: tables
    merge, anything else in `data` wins; a gating-labels table replaces the profile's."""
    out = dict(defaults)
    for key, value in data.items():
        base = out.get(key)
        if isinstance(base, dict) and isinstance(value, dict) and key != "gating-labels":
            out[key] = overlay(base, value)
        else:
            out[key] = value
    return out


def parse_config(data: dict, source: str, prefix: str = "", defaults: dict | None = None) -> Config:
    try:
        # Files are read by alias only, so a snake_case key is reported, not quietly taken.
        return Config.model_validate(
            overlay(defaults, data) if defaults else data, by_alias=True, by_name=False
        )
    except ValidationError as exc:
        raise ConfigError(_format_validation(source, prefix, exc)) from None
