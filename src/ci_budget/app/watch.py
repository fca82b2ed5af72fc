"""Use case `history watch`: each suite's slowest-shard wall over runs against its timeout, the
sustained step changes of its files with the commits that could have caused them, and est_time
against measured p90; as text, JSON, or the markdown of one tracking issue."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_budget.app.numbers import store_option, store_path
from ci_budget.app.settings import AppError, Sink, option

KEEP = 10_000  # samples kept per series in memory: the watch reads every run it is given
ISSUE_TITLE = "ci-budget watch: stage headroom, step changes and est_time"


@dataclass
class WatchOptions:
    inputs: list[Path] = option(
        list, flag=None, nargs="*", metavar="RUNS",
        help="sglang-ci-stats run files, ci-budget results files, or directories of them "
        "(read beside --history; nothing is written)",
    )  # fmt: skip
    store: Path | None = store_option()
    format: str = option(
        "text", choices=("text", "json", "markdown"),
        help="what to print: markdown is the body of one tracking issue",
    )  # fmt: skip
    suites: list[str] = option(list, flag="--suite", help="only this suite (repeatable)")
    post_issue: bool = option(
        False,
        help="open, or edit in place, one tracking issue with the markdown (GITHUB_REPOSITORY, "
        "GITHUB_TOKEN or --token; needs issues: write)",
    )
    issue_title: str = option(ISSUE_TITLE, help="the tracking issue's title when it is opened")
    issue_label: str = option(
        "ci-budget-watch", help="the tracking issue's label: the issue edited is ours with it"
    )


def _history(settings, options: WatchOptions, sink: Sink):
    from ci_budget.app.history import add_directory, add_file
    from ci_budget.app.numbers import open_store
    from ci_budget.history.model import History

    given = options.store is not None or not options.inputs
    path = store_path(settings, options.store)
    history = open_store(path, KEEP, missing_ok=not given) if given else History(KEEP)
    bad: list[str] = []
    for item in options.inputs:
        if item.is_dir():
            add_directory(history, item, bad, Sink(settings, stdout=_Null()))
        else:
            add_file(history, item, bad, in_directory=False)
    if bad:
        raise AppError(bad[0])
    return history


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _log(root: Path):
    """`before..after` -> commits, each range read once; None where git cannot say."""
    from ci_budget.history.watch import Commit
    from ci_budget.workspace.git import GitError, in_work_tree
    from ci_budget.workspace.scan import range_log

    usable = in_work_tree(root)
    seen: dict[tuple[str, str], list[Commit] | None] = {}

    def log(before: str, after: str):
        if not usable:
            return None
        if (before, after) not in seen:
            try:
                found = range_log(root, before, after)
            except GitError:
                found = None
            seen[before, after] = (
                None if found is None else [Commit(sha, subj, paths) for sha, subj, paths in found]
            )
        return seen[before, after]

    return log


def _imports(root: Path, files) -> dict[str, set[str]]:
    from ci_budget.history.watch import imported_modules
    from ci_budget.workspace.files import read_source

    out = {}
    for rel in files:
        try:
            out[rel] = imported_modules(read_source(root / rel))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def watch(settings, options: WatchOptions, sink: Sink | None = None) -> int:
    """Exit 2 on a history or run file that cannot be read."""
    from ci_budget.history import watch as core
    from ci_budget.render import history_md
    from ci_budget.workspace.scan import scan_tree

    sink = sink or Sink(settings)
    settings.check()
    history = _history(settings, options, sink)
    root, config = settings.root, settings.config
    regs = [r for r in scan_tree(root, config).registrations if r.enabled]
    stage = {r.suite: r.stage for r in regs}
    timeouts = {s: config.suite_timeout_s(s, stage.get(s)) for s in history.jobs}
    files = {f for f, _ in history.keys()}
    found = core.watch(
        history, timeouts, regs, _log(root), _imports(root, files), set(options.suites)
    )
    if options.format == "json":
        sink.json(history_md.watch_json(found))
    elif options.format == "markdown":
        sink.write(history_md.watch_markdown(found))
    else:
        sink.write(history_md.watch_text(found))
    if options.post_issue:
        _post(settings, options, history_md.watch_markdown(found), sink)
    return 0


def _post(settings, options: WatchOptions, body: str, sink: Sink) -> None:
    """Upsert the one tracking issue; an AppError (one line) when GitHub refuses."""
    from ci_budget.github.client import client_from_env
    from ci_budget.github.retry import GitHubError
    from ci_budget.github.sticky import upsert_issue
    from ci_budget.render.history_md import MARKER

    try:
        client = client_from_env(settings.env.values, token=settings.token, config=settings.config)
        number, action = upsert_issue(
            client, options.issue_title, options.issue_label, MARKER, body
        )
    except GitHubError as exc:
        raise AppError(f"tracking issue: {exc.message}") from None
    sink.note(f"tracking issue #{number} {action}")
