"""The project on disk: its root directory and its configuration file."""

from __future__ import annotations

import sys
from pathlib import Path

from ci_budget.config import Config, ConfigError, parse_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_FILE = "ci-budget.toml"


def find_root(start: Path | None = None) -> Path:
    """The nearest directory up from `start` holding a `ci-budget.toml` or a `.git` (the git top
    level), else `start` itself. A `ci-budget.toml` marks a project inside a larger checkout."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_FILE).is_file() or (candidate / ".git").exists():
            return candidate
    return here


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _load_file(root: Path, path: Path | None, defaults: dict | None) -> Config:
    """Explicit `path`, else `ci-budget.toml` at `root`, else `[tool.ci-budget]` in pyproject;
    each over `defaults`, if given."""
    if path is not None:
        data = _read_toml(path)
        if path.name == "pyproject.toml":
            return parse_config(
                data.get("tool", {}).get("ci-budget", {}), str(path), "[tool.ci-budget]", defaults
            )
        return parse_config(data, str(path), defaults=defaults)
    candidate = root / CONFIG_FILE
    if candidate.is_file():
        return parse_config(_read_toml(candidate), str(candidate), defaults=defaults)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        section = _read_toml(pyproject).get("tool", {}).get("ci-budget")
        if section is not None:
            return parse_config(section, str(pyproject), "[tool.ci-budget]", defaults)
    return parse_config({}, "defaults", defaults=defaults) if defaults else Config()


def load_config(root: Path, path: Path | None = None) -> Config:
    """The configuration file's settings, laid over what the checkout's own CI files say when
    it is an sglang checkout (`profile = "auto"`). Each CI file that is missing or does not
    parse is one warning on stderr, naming it and what fell back to ci-budget's defaults."""
    from ci_budget.workspace.ciprofile import detect

    config = _load_file(root, path, None)
    if config.profile != "auto":
        return config
    profile = detect(root)
    if profile is None:
        return config
    if profile.refused:
        raise ConfigError(f"{root}: {profile.refused} is not supported; "
                          'profile = "none" in ci-budget.toml skips reading it')  # fmt: skip
    for warning in profile.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return _load_file(root, path, profile.settings)
