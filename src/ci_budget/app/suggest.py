"""Use case `history suggest`: new est_time values from the timing history, or from a
partition model as sglang's updater writes them, optionally written back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.numbers import store_option
from ci_budget.app.settings import Sink, option


@dataclass
class SuggestOptions:
    store: Path | None = store_option()
    suites: list[str] = option(list, flag="--suite", help="only this suite (repeatable)")
    write: bool = option(False, help="rewrite est_time in the test files")
    format: str = option("text", choices=("text", "json"), help="what to print")
    min_samples: int = option(1, help="passing runs needed for a suggestion")
    include_all: bool = option(
        False, flag="--all",
        help="also list (and with --write, write) changes below the 30 s / 30 %% rule",
    )  # fmt: skip
    rule: str = option(
        "margin", choices=("margin", "sglang"),
        help="margin: p90 x (1 + thresholds.margin) rounded up to thresholds.round-to; sglang: "
        "the p90 itself, as sglang's update_est_time.py writes it",
    )  # fmt: skip
    open_pr: str | None = option(
        None, metavar="BRANCH",
        help="write, commit the rewritten files on BRANCH (from HEAD; force-pushed to origin) "
        "and open or update ONE pull request from it with a table of old, new, measured and "
        "why (GITHUB_REPOSITORY, GITHUB_TOKEN or --token; contents and pull-requests: write)",
    )  # fmt: skip
    pr_base: str | None = option(
        None, metavar="BRANCH", help="the branch the pull request goes into (default: GITHUB_REF)"
    )
    partition_model: Path | None = option(
        None, metavar="FILE",
        help="suggest sglang-ci-stats model.json's est as sglang's update_est_time.py writes "
        "it (each says whether that script's text match finds the call); no history needed",
    )  # fmt: skip


def suggest(settings, options: SuggestOptions, sink: Sink | None = None) -> int:
    """Exit 2 when a file could not be rewritten or the model could not be used."""
    from ci_budget.registry.parse import select
    from ci_budget.workspace.scan import scan_tree

    sink = sink or Sink(settings)
    root, config = settings.root, settings.config
    found_scan = scan_tree(root, config)
    regs = select(found_scan, suites=options.suites)
    left = []
    if options.open_pr:  # disabled and nightly-only registrations stay as they are
        left = [r for r in regs if not r.enabled or r.nightly]
        regs = [r for r in regs if r.enabled and not r.nightly]
    found = _found(settings, options, regs, sink)
    if found is None:
        return 2
    if options.open_pr and options.partition_model is None:  # before the files are rewritten
        from ci_budget.budget.suggest import mark_updater

        mark_updater(found, regs, lambda rel: _read(settings.root / rel))
    if options.format == "json":
        sink.json(
            [s.model_dump(mode="json") | {"delta": s.delta, "significant": _big(s)} for s in found]
        )
    else:
        for s in found:
            sink.echo(_line(s, _big(s)))
        if not found:
            sink.echo("no est_time changes to suggest")
    for problem in found_scan.errors:
        sink.warn(f"registry error, file skipped: {problem}")
    if not (options.write or options.open_pr):
        return 0
    failed = _rewrite(settings, found, sink, options.include_all)
    if options.open_pr and not failed:
        _open_pr(settings, options, [s for s in found if options.include_all or _big(s)], left,
                 sink)  # fmt: skip
    return 2 if failed else 0


def _big(s) -> bool:
    from ci_budget.budget.suggest import significant

    return significant(s.est_time, s.suggested)


def _found(settings, options: SuggestOptions, regs, sink: Sink):
    """The suggestions, from the model when one is given, else from the history store."""
    from ci_budget.app.numbers import open_store, store_path
    from ci_budget.budget import suggest as rule

    if options.partition_model is None:
        history = open_store(store_path(settings, options.store))
        thresholds = settings.config.thresholds
        if options.rule == "sglang":  # the p90 itself, as update_est_time.py writes the model's
            thresholds = thresholds.model_copy(update={"margin": 0.0, "round_to": 1})
        return rule.suggest(
            regs, history, thresholds, options.min_samples, include_all=options.include_all
        )
    from ci_budget.app.numbers import note_uncovered, partition_model
    from ci_budget.sharding.dispatch import PlanNumbers
    from ci_budget.workspace.files import read_source

    model = partition_model(options.partition_model, sink)
    if model is None:
        return None
    if options.suites:
        note_uncovered(PlanNumbers(model=model), options.suites, sink)

    def read(rel: str) -> str | None:
        try:
            return read_source(settings.root / rel)
        except (OSError, UnicodeDecodeError):
            return None

    return rule.from_model(regs, model, read, include_all=options.include_all)


def _line(s, significant: bool) -> str:
    from ci_budget.models import secs

    mark = "" if significant else "  (below 30s / 30%)"
    if s.source == "model":
        how = (
            "sglang's updater makes it too"
            if s.updater
            else f"sglang's updater misses it: {s.updater_missed}"
        )
        return (
            f"{s.file}:{s.line}: {s.suite}: est_time {s.est_time:g} -> {s.suggested:g} "
            f"({secs(s.delta, '+')}; the model's est; {how}){mark}"
        )
    timeouts = f"; {s.timeouts} timeout(s), >= {secs(s.timeout_lower_bound)}" if s.timeouts else ""
    return (
        f"{s.file}:{s.line}: {s.suite}: est_time {s.est_time:g} -> {s.suggested} "
        f"({secs(s.delta, '+')}; p90 {secs(s.p90)} over {s.n} passing run(s){timeouts}){mark}"
    )


def _rewrite(settings, found, sink: Sink, include_all: bool = False) -> int:
    """Write each listed suggestion (only the significant ones without --all) into its file,
    changing only the est_time literal; returns how many failed."""
    from ci_budget.budget.suggest import RewriteError, rewrite_est_time, significant
    from ci_budget.workspace.files import read_source, write_source

    failed = 0
    for s in found:
        if not include_all and not significant(s.est_time, s.suggested):
            continue
        path = settings.root / s.file
        try:
            text = read_source(path)
            new = rewrite_est_time(text, s.file, s.suite, s.backend, s.suggested, settings.config)
            write_source(path, new)
        except (OSError, RewriteError, SyntaxError) as exc:
            sink.error(f"{s.file}:{s.line}: not rewritten: {exc}")
            failed += 1
            continue
        sink.note(f"wrote {s.file}:{s.line}: est_time={s.suggested}")
    return failed


PR_TITLE = "Update est_time from measured runs"


def _open_pr(settings, options: SuggestOptions, found, left, sink: Sink) -> None:
    """Commit the rewritten files on the branch, push it, and open or update its one pull
    request; nothing when no file changed (an open one stays as it is)."""
    from ci_budget.app.settings import AppError
    from ci_budget.github.client import client_from_env
    from ci_budget.github.retry import GitHubError
    from ci_budget.github.sticky import upsert_pull
    from ci_budget.render.history_md import est_time_pr
    from ci_budget.workspace.git import GitError
    from ci_budget.workspace.scan import push_branch

    env = settings.env.values
    base = options.pr_base or env.get("GITHUB_REF", "").removeprefix("refs/heads/")
    if not base:
        raise AppError("--open-pr needs --pr-base (or GITHUB_REF): the branch to open it into")
    files = sorted({s.file for s in found})
    branch = options.open_pr or ""
    try:
        pushed = push_branch(settings.root, branch, files, PR_TITLE)
    except GitError as exc:
        raise AppError(f"--open-pr {options.open_pr}: {exc}") from None
    if not pushed:
        sink.note("no est_time changed: no pull request opened or updated")
        return
    body = est_time_pr(found, left, options.rule)
    try:
        client = client_from_env(env, token=settings.token, config=settings.config)
        number, action = upsert_pull(client, branch, base, PR_TITLE, body)
    except GitHubError as exc:
        raise AppError(f"--open-pr: {exc.message}") from None
    sink.note(f"pull request #{number} {action} from {options.open_pr} into {base}")


def _read(path: Path) -> str | None:
    from ci_budget.workspace.files import read_source

    try:
        return read_source(path)
    except (OSError, UnicodeDecodeError):
        return None
