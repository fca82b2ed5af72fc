"""What one side (sglang's scripts or ci-budget) decides for a checkout, in one comparable shape."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reg:
    file: str
    backend: str
    est_time: float
    stage: str | None
    runner_config: str | None
    suite: str | None
    nightly: bool
    disabled: str | None


FIELDS = ("backend", "est_time", "stage", "runner_config", "suite", "nightly", "disabled")


@dataclass
class SuiteView:
    size: int
    max_parallel: int
    runs_on: list[str]
    shards: list[list[str]] = field(default_factory=list)  # each shard's files, in run order


@dataclass
class View:
    registrations: list[Reg] = field(default_factory=list)
    suites: dict[str, SuiteView] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
