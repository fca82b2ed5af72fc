"""Registrations as the scanner returns them, for tests that start from a registry."""

from __future__ import annotations

from ci_budget.models import Registration


def reg(
    file: str,
    est: float = 100.0,
    suite: str | None = None,
    *,
    stage: str | None = None,
    runner: str | None = None,
    backend: str = "cuda",
    line: int = 1,
    under: str = "",
    legacy: bool = False,
    **kw,
) -> Registration:
    """One `register_<backend>_ci(...)` call in `file` (prefixed with `under` unless it has it).

    Without `suite`: `stage=` and `runner_config=` (default base-b, 1-gpu-large) name the suite
    `{stage}-test-{runner}`. With `suite`: a `{stage}-test-{runner}` name also gives the
    registration's stage and runner config where those are not given; `legacy` makes it an
    old `suite=` call, with neither."""
    if legacy:
        stage = runner = None
    elif suite is None:
        stage, runner = stage or "base-b", runner or "1-gpu-large"
        suite = f"{stage}-test-{runner}"
    elif "-test-" in suite:
        named_stage, named_runner = suite.split("-test-", 1)
        stage, runner = stage or named_stage, runner or named_runner
    return Registration(
        file=file if file.startswith(under) else under + file,
        line=line,
        function=f"register_{backend}_ci",
        backend=backend,
        est_time=est,
        suite=suite,
        stage=stage,
        runner_config=runner,
        **kw,
    )
