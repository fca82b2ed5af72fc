"""What every use case takes and gives: `(Settings, options, Sink) -> exit code`.

- `AppError`: the one error a use case raises for bad usage or input.
- Options: one dataclass field each (`option(...)`), its default, help and command-line
  spelling written once, here in `app`. The command line is built from the fields
  (`cli.common`) and its namespace passes straight back into the dataclass. `option(...)` takes
  the default first (`list` for an empty list) and, in its metadata: `flag` (default
  `--field-name`; `None` for a positional), `needs` (the field that must be set for this one to
  apply: a flag that would be ignored is refused instead).
- `Settings`: what a command knows, built once at the edge from its arguments, the config file
  and the environment. The environment is read once (`github.actions.runner_env`), the config
  file at most once (on first use: some commands never need it), the event payload at most once
  and with its size cap.
- `Sink`: every output a command writes — the terminal, report files, the step summary, step
  outputs, annotations and the sticky comment — in one place, so each is written the same way
  by every command and the token never reaches a message.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, Field, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from ci_budget.render.escape import log_text  # the CLI's own error line uses it too


class AppError(Exception):
    """A usage or input error: printed as one line, exit status 2 unless told otherwise."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


FORMATS = ("text", "json", "markdown")  # the one --format vocabulary; each command a subset
HISTORY_HELP = "timing history store: shard by measured p90 where it has passing runs"
MODEL_HELP = (
    "sglang-ci-stats model.json: per-file seconds and per-suite fits for shard sizes and "
    "splits (missing or unreadable: a warning, then est_time)"
)


def option(
    default: Any = MISSING,
    *,
    help: str,
    flag: str | None = "",
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    nargs: str | None = None,
    required: bool = False,
    off: str | None = None,
    needs: str | None = None,
) -> Any:
    """A dataclass field that is also a command-line option. `flag=None` makes it positional;
    `off` names the flag that sets a boolean back to False."""
    meta = {
        "help": help,
        "flag": flag,
        "metavar": metavar,
        "choices": choices,
        "nargs": nargs,
        "required": required,
        "off": off,
        "needs": needs,
    }
    if default is list:
        return field(default_factory=list, metadata=meta)
    return field(default=default, metadata=meta)


def flag_of(f: Field) -> str | None:
    """The option's command-line flag (None for a positional)."""
    flag = f.metadata.get("flag", "")
    return "--" + f.name.replace("_", "-") if flag == "" else flag


def default_of(f: Field) -> Any:
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None if f.default is MISSING else f.default


def refuse_unused(options) -> None:
    """An option given whose `needs` is not: one line naming both, instead of ignoring it."""
    for f in fields(options):
        need = f.metadata.get("needs")
        if need and getattr(options, f.name) != default_of(f) and not getattr(options, need):
            needed = next(g for g in fields(options) if g.name == need)
            raise AppError(f"{flag_of(f)} applies only with {flag_of(needed)}")


# The published report's options, shared by `report` and `diff`.
FAIL_ON = ("over", "timeout", "failed", "never")
COMMENT_MODES = ("always", "changes", "off")


def out_option():
    return option(
        None, metavar="FILE",
        help="also write the markdown to FILE and a .json copy next to it (default: no file)",
    )  # fmt: skip


def kept(out: Path | None) -> str:
    """Where a report is kept besides what was printed, for the error of a failed post."""
    return f"the report is in {out}" if out is not None else "the report was printed only"


def format_option():
    return option(
        None, choices=FORMATS, help="what to print (default: text on a terminal, else markdown)"
    )


def fail_on_option(help: str):
    return option("never", choices=FAIL_ON, help=help)


def post_option():
    return option(False, help="publish as the PR's sticky comment")


def pr_option():
    return option(None, help="PR number for --post (default: the event's)")


def comment_mode_option():
    return option(
        "changes", choices=COMMENT_MODES, needs="post",
        help="--post: always create or update the comment; changes: create it only when the "
        "PR changes what ci-budget watches or a finding exists, update one that exists "
        "(default: %(default)s); off: post nothing",
    )  # fmt: skip


class Settings:
    def __init__(
        self,
        root: Path | None = None,
        config_file: Path | None = None,
        *,
        token: str | None = None,
        event_name: str | None = None,
        event_path: str | None = None,
        environ: Mapping[str, str] | None = None,
        config=None,
    ):
        from ci_budget.github.actions import runner_env

        self._root = root
        self._config_file = config_file
        self.env = runner_env(environ).with_token(token)  # the one read of the environment
        self.event_name = event_name or self.env.event_name
        self.event_path = event_path or self.env.event_path
        if config is not None:
            self.config = config

    @cached_property
    def root(self) -> Path:
        from ci_budget.workspace.project import find_root

        if self._root is None:
            return find_root()
        root = self._root.resolve()
        if not root.is_dir():
            raise AppError(f"--root {self._root}: not a directory")
        return root

    @property
    def root_given(self) -> bool:
        """Whether the root was named (--root), rather than found from the current directory."""
        return self._root is not None

    @cached_property
    def config(self):
        from ci_budget.config import ConfigError
        from ci_budget.workspace.project import load_config

        root = self.root
        try:
            return load_config(root, self._config_file)
        except ConfigError as exc:
            raise AppError(str(exc)) from None

    def check(self) -> Settings:
        """Resolve the root and read the config now, so their errors come first."""
        _ = self.config
        return self

    @property
    def token(self) -> str | None:
        return self.env.token

    @cached_property
    def _event(self) -> tuple[dict[str, Any] | None, Exception | None]:
        from ci_budget.github.actions import EventError, load_payload

        try:
            return load_payload(self.event_name, self.event_path), None
        except EventError as exc:
            return None, exc

    def event(self) -> dict[str, Any]:
        """The event payload (read on first use, then kept), or EventError."""
        payload, error = self._event
        if error is not None:
            raise error
        assert payload is not None  # _event holds one or the other
        return payload

    def pr_number(self) -> int:
        """The pull request of the event, or EventError saying why there is none."""
        from ci_budget.github.actions import EventError, pr_number

        if not self.event_path:
            raise EventError("no pull request: pass --pr N (GITHUB_EVENT_PATH is not set)")
        return pr_number(self.event_name, self.event(), self.event_path)


class Sink:
    def __init__(self, settings, stdout=None, stderr=None):
        self.settings = settings
        self._stdout = stdout
        self._stderr = stderr

    # Resolved on each write: a test (or a caller) may swap sys.stdout after the sink is made.
    @property
    def stdout(self):
        return self._stdout or sys.stdout

    @property
    def stderr(self):
        return self._stderr or sys.stderr

    def isatty(self) -> bool:
        return self.stdout.isatty()

    def write(self, text: str) -> None:
        """`text` on stdout as it is, except that no line of it reads as a workflow command
        (`escape.log_text`): paths, suite names and messages come from the PR's files."""
        self.stdout.write(log_text(text))

    def echo(self, text: str = "") -> None:
        """`text` on stdout, ending in exactly one newline."""
        self.write(text if text.endswith("\n") else text + "\n")

    def json(self, data: object) -> None:
        """`data` as indented JSON on stdout."""
        import json

        json.dump(data, self.stdout, indent=2)
        self.stdout.write("\n")

    def report(self, text: str, path: Path | None, explicit: bool, wrap: bool = True) -> None:
        """A report on stdout with no workflow command from its data (`workflow.print_report`).
        In Actions, unless a format was asked for, it is in the step summary (and `path`), and
        the log gets one line saying so (data stays out of it)."""
        from ci_budget.github.actions import print_report

        in_actions = self.settings.env.in_actions
        if in_actions and not explicit:
            where = f"{path} and in the step summary" if path is not None else "the step summary"
            text, wrap = f"ci-budget: the report is in {where}", False
        print_report(text, self.stdout, fence=wrap and in_actions)

    def note(self, text: str) -> None:
        """A line for the person at the terminal (stderr)."""
        print(log_text(text), file=self.stderr)

    def warn(self, text: str) -> None:
        self.note(f"warning: {text}")

    def error(self, text: str) -> None:
        self.note(f"error: {text}")

    def flush(self) -> None:
        self.stdout.flush()

    def report_files(
        self, out: Path | None, markdown: str, json_text: str | Iterable[str], echo: bool = False
    ) -> None:
        """`out` (markdown) and its `.json` copy, written (and with `echo` printed too) piece by
        piece as `json_text` yields them; a failure is an AppError naming the file. No `out`:
        no file, only what `echo` prints."""
        pieces = [json_text] if isinstance(json_text, str) else json_text
        if out is None:
            if echo:
                for piece in pieces:
                    self.write(piece)
                self.stdout.flush()
            return
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(markdown, encoding="utf-8")
            with open(out.with_suffix(".json"), "w", encoding="utf-8") as handle:
                for piece in pieces:
                    handle.write(piece)
                    if echo:
                        self.write(piece)
        except OSError as exc:
            raise AppError(f"{out}: cannot write: {exc.strerror}") from None
        if echo:
            self.stdout.flush()

    def summary(self, markdown: str) -> None:
        from ci_budget.github.actions import append_summary

        append_summary(markdown, env=self.settings.env.values)

    def outputs(self, values: Mapping[str, object]) -> None:
        from ci_budget.github.actions import set_outputs

        set_outputs(values, env=self.settings.env.values)

    def annotations(self, commands: Iterable[str]) -> None:
        """Workflow commands, printed only inside Actions (elsewhere they are noise)."""
        if self.settings.env.in_actions:
            for command in commands:
                print(command, file=self.stdout)

    def post(self, markdown: str, *, kind: str, pr: int | None, what: str, where: str,
             mode: str = "always", news: bool = True) -> None:  # fmt: skip
        """Upsert the `kind` sticky comment (on `pr`, else the event's pull request). A failure
        names `what` was posted and `where` the report is kept, with the token masked.

        `mode` (--comment-mode): always; changes, where a comment is created only when the
        report has `news` (a change ci-budget watches, or a finding) and an existing one is
        always updated; off, nothing posted."""
        if mode == "off":
            self.echo(f"ci-budget: comment-mode off: no {kind} comment posted ({where})")
            return
        from ci_budget.github.client import client_from_env
        from ci_budget.github.sticky import upsert

        settings = self.settings
        token = settings.token
        try:
            number = pr if pr is not None else settings.pr_number()
            client = client_from_env(settings.env.values, token=token, config=settings.config)
            result = upsert(client, number, kind, markdown, create=mode == "always" or news)
        except Exception as exc:  # any failure: say so, the report is already on disk
            message = str(exc)
            if token:
                message = message.replace(token, "***")
            raise AppError(f"posting {what} failed: {message} ({where})") from None
        if result.action == "not created":
            self.echo(
                f"ci-budget: no {kind} comment on {client.repo_name}#{number}: no change "
                f"ci-budget watches and no finding (comment-mode changes; {where})"
            )
            return
        self.echo(
            f"ci-budget: {result.action} the {kind} comment {result.comment_id} on "
            f"{client.repo_name}#{number} ({result.calls} API calls)"
        )
