"""Use case `scan`: the registry, by suite or as JSON, with every problem."""

from __future__ import annotations

from dataclasses import dataclass

from ci_budget.app.settings import AppError, Sink, option


@dataclass
class ScanOptions:
    format: str = option("text", choices=("text", "json"), help="what to print")
    suites: list[str] = option(list, flag="--suite", help="only this suite (repeatable)")
    stages: list[str] = option(list, flag="--stage", help="only this stage (repeatable)")
    runner_configs: list[str] = option(
        list, flag="--runner-config", help="only this runner config (repeatable)"
    )
    backends: list[str] = option(
        list, flag="--backend", help="only this backend (cuda, cpu, ...; repeatable)"
    )
    full: bool = option(
        False,
        help="parse every file completely (also finds syntax errors outside the registrations)",
    )
    jobs: int | None = option(None, help="worker processes (default: all cores)")


def scan(settings, options: ScanOptions, sink: Sink | None = None) -> int:
    """Exit 1 when any file has a registry error."""
    from ci_budget.registry.parse import select
    from ci_budget.workspace.scan import discover, scan_paths

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    found = scan_paths(root, discover(root, config), config, full=options.full, jobs=options.jobs)
    _check_known(found.registrations, options)
    regs = select(found, options.suites, options.stages, options.runner_configs, options.backends)
    if options.format == "json":
        sink.json(
            {
                "registrations": [r.model_dump(mode="json") for r in regs],
                "errors": [p.model_dump(mode="json") for p in found.errors],
                "warnings": [p.model_dump(mode="json") for p in found.warnings],
            }
        )
    else:
        from ci_budget.render.text import registry_table

        sink.write(registry_table(regs))
        for problem in found.errors:
            sink.error(str(problem))
        for problem in found.warnings:
            sink.warn(str(problem))
    return 1 if found.errors else 0


def _check_known(registrations, options: ScanOptions) -> None:
    """An unknown --suite/--stage/--runner-config/--backend is a usage error, as in `run`."""
    from ci_budget.registry.parse import unknown

    for flag, attr, values in (
        ("--suite", "suite", options.suites),
        ("--stage", "stage", options.stages),
        ("--runner-config", "runner_config", options.runner_configs),
        ("--backend", "backend", options.backends),
    ):
        known = {getattr(r, attr) for r in registrations} - {None}
        for value in values:
            if value not in known:
                raise AppError(unknown(flag[2:].replace("-", " "), value, known))
