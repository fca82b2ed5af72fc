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


def add_history(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--history",
        type=Path,
        default=None,
        metavar="FILE",
        help="timing history store: shard by measured p90 where it has passing runs",
    )


def history_weights(path: Path | None, registrations) -> dict[tuple[str, str], float]:
    """(file, suite) -> measured p90 from the store at `path` ({} without one). Every shard of
    a run must read the same store, or the shards would split the files differently."""
    if path is None:
        return {}
    from ci_budget.history.model import HistoryError, load_history
    from ci_budget.sharding.planners import weights_for

    try:
        history = load_history(path, missing_ok=False)
    except HistoryError as exc:
        raise CliError(f"--history: {exc}") from None
    regs = list(registrations)
    return {
        (reg.file, reg.suite): seconds
        for reg, (_, seconds) in zip(regs, weights_for(regs, history), strict=True)
    }
