"""Options and helpers every subcommand shares."""

from __future__ import annotations

import argparse
from pathlib import Path

from ci_budget.app.errors import AppError as CliError  # noqa: F401 - until every command is an app call


def settings(args, **extra):
    """The `Settings` of a subcommand with --root/--config (and --token where it has one)."""
    from ci_budget.app.settings import Settings

    return Settings(args.root, args.config, token=getattr(args, "token", None), **extra)


def add_subcommand(sub, name: str, help: str, description: str, example: str):
    """A subparser whose --help ends with a worked example."""
    parser = sub.add_parser(
        name.replace("_", "-"),
        help=help,
        description=description,
        epilog="example:\n  " + example.strip().replace("\n", "\n  "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(_parser=parser)  # the innermost one answers an unknown option
    return parser


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


def add_history(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--history",
        type=Path,
        default=None,
        metavar="FILE",
        help="timing history store: shard by measured p90 where it has passing runs",
    )


def add_partition_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--partition-model",
        type=Path,
        default=None,
        metavar="FILE",
        help="sglang-ci-stats model.json: per-file seconds and per-suite fits for shard sizes "
        "and splits (missing or unreadable: a warning, then est_time)",
    )
