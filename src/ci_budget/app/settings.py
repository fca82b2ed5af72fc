"""`Settings`: what a command knows, built once at the edge from its arguments, the config file
and the environment.

The environment is read once (`github.actions.runner_env`), the config file at most once (on first
use: some commands never need it), the event payload at most once and with its size cap.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from ci_budget.app.errors import AppError


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
