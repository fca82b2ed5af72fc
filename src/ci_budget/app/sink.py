"""`Sink`: every output a command writes — the terminal, report files, the step summary, step
outputs, annotations and the sticky comment — in one place, so each is written the same way by
every command and the token never reaches a message."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from ci_budget.app.errors import AppError
from ci_budget.render.escape import log_text  # the CLI's own error line uses it too


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
