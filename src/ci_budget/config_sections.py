"""The sections of the configuration (`config.Config` holds them): runner configs, thresholds,
GitHub, retry patterns, the planner, guard tables. Keys are kebab-case in TOML."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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
