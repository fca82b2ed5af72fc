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


def load(args):
    """(root, config) for a subcommand, with config errors turned into CLI errors."""
    made = settings(args)
    return made.root, made.config


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
    from ci_budget.history.model import HistoryError
    from ci_budget.sharding.planners import weights_for
    from ci_budget.workspace.history_store import load_history

    try:
        history = load_history(path, missing_ok=False)
    except HistoryError as exc:
        raise CliError(f"--history: {exc}") from None
    regs = list(registrations)
    return {
        (reg.file, reg.suite): seconds
        for reg, (_, seconds) in zip(regs, weights_for(regs, history), strict=True)
    }


def add_partition_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--partition-model",
        type=Path,
        default=None,
        metavar="FILE",
        help="sglang-ci-stats model.json: per-file seconds and per-suite fits for shard sizes "
        "and splits (missing or unreadable: a warning, then est_time)",
    )


def load_partition_model(path: Path | None):
    """The model at `path`, or None (with a warning when a named file cannot be used): shards
    are then planned on est_time, as sglang's scripts fall back."""
    import json
    import sys

    from ci_budget.sharding.model import model_from_json

    if path is None:
        return None
    try:
        model = model_from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else f"invalid JSON: {exc}"
        print(f"warning: --partition-model {path}: {reason}; using est_time", file=sys.stderr)
        return None
    if model is None:
        print(f"warning: --partition-model {path}: not a JSON object; using est_time",
              file=sys.stderr)  # fmt: skip
    return model


def merged_weights(history: dict, model) -> dict[tuple[str, str], float]:
    """Measured history first, then the partition model's per-file seconds."""
    return {**(model.weights() if model is not None else {}), **history}
