"""Options and helpers every subcommand shares."""

from __future__ import annotations

import argparse
from pathlib import Path


class CliError(Exception):
    """A usage or input error: printed as one line, exit status 2 unless told otherwise."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def add_subcommand(sub, name: str, help: str, description: str, example: str):
    """A subparser whose --help ends with a worked example."""
    return sub.add_parser(
        name.replace("_", "-"),
        help=help,
        description=description,
        epilog="example:\n  " + example.strip().replace("\n", "\n  "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="repository root (default: the nearest directory up with a ci-budget.toml or .git, else cwd)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="config file (default: ci-budget.toml or "
        "[tool.ci-budget] in pyproject.toml at the root)",
    )


def find_root(start: Path | None = None) -> Path:
    """The nearest directory up from `start` holding a `ci-budget.toml` or a `.git` (the git top
    level), else `start` itself. A `ci-budget.toml` marks a project inside a larger checkout."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "ci-budget.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return here


def resolve_root(args) -> Path:
    if args.root is not None:
        root = args.root.resolve()
        if not root.is_dir():
            raise CliError(f"--root {args.root}: not a directory")
        return root
    return find_root()


def load(args):
    """(root, config) for a subcommand, with config errors turned into CLI errors."""
    from ci_budget.config import ConfigError, load_config

    root = resolve_root(args)
    try:
        return root, load_config(root, args.config)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
