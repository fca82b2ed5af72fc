"""The project on disk: its root directory and its configuration file; the checkout's own CI
files turned into default settings (see ciprofile/); and the base branch's
`.github/CI_PERMISSIONS.json` (sglang's grants), read for `plan`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ci_budget.config import Config, ConfigError, parse_config

if TYPE_CHECKING:
    from ci_budget.ciprofile.sglang import Profile
    from ci_budget.trigger.authz import Permissions

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


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def detect(root: Path) -> Profile | None:
    """The sglang profile when `root` has any of sglang's CI files, else None (no profile:
    ci-budget's own defaults, as for any other repository)."""
    from ci_budget.ciprofile import sglang
    from ci_budget.ciprofile.sglang_jobs import output_names

    if not any((root / rel).is_file() for rel in sglang.MARKERS):
        return None
    texts = {
        rel: _read(root, rel)
        for rel in (
            *sglang.MARKERS,
            sglang.PR_TEST,
            sglang.RUN_SUITE,
            sglang.CI_UTILS,
            sglang.HANDLER,
        )
    }
    for rel in sglang.stage_workflows(texts[sglang.PARTITIONS]):
        texts[rel] = _read(root, rel)
    workflows = {}
    for path in sorted((root / ".github" / "workflows").glob("*.y*ml")):
        rel = path.relative_to(root).as_posix()
        workflows[path.name] = texts[rel] = texts.get(rel) or _read(root, rel) or ""
    # `$name` labels of runner_configs.yml, and `needs.*.outputs.NAME` labels of pr-test.yml
    names = sglang.sentinels(texts[sglang.RUNNER_CONFIGS]) + output_names([texts[sglang.PR_TEST]])
    return sglang.build(texts, sglang.sentinel_values(names, workflows))


MAX_BYTES = 4 * 1024 * 1024


def read_permissions(root: Path, rel: str) -> tuple[Permissions | None, list[str]]:
    """(the grants, warnings). A missing file is no grants and no warning; one that cannot be
    used is no grants and one warning naming it: authorisation then asks GitHub, never less."""
    from ci_budget.trigger.authz import PermissionsError, parse_permissions

    if not rel:
        return None, []
    path = root / rel
    try:
        if not path.is_file():
            return None, []
        if path.stat().st_size > MAX_BYTES:
            return None, [f"{rel}: over {MAX_BYTES // 2**20} MiB; its grants are not used"]
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        return None, [f"{rel}: cannot read it ({exc}); its grants are not used"]
    try:
        permissions = parse_permissions(data, rel)
    except PermissionsError as exc:
        return None, [f"{exc}; its grants are not used"]
    return permissions, list(permissions.problems)
