"""The command line built from the use cases' options (`app.settings`): each leaf command names
its use case `(module, function, options class)`; its flags, defaults and help come from the
options' fields, and the parsed namespace goes back into the options class unchanged.

A leaf's options are added on first use (parsing or help), so a command imports only its own
use case's module and `--help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path


class LazyParser(argparse.ArgumentParser):
    """A parser whose arguments are added by `load` the first time it parses or prints help."""

    load = None

    def _loaded(self) -> None:
        if self.load is not None:
            load, self.load = self.load, None
            load(self)

    def parse_known_args(self, args=None, namespace=None):
        self._loaded()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._loaded()
        return super().format_help()

    def format_usage(self) -> str:
        self._loaded()
        return super().format_usage()


def add_group(sub, name: str, help: str, description: str, example: str):
    """A command whose verbs are leaves (`guard`, `history`); returns their subparsers."""
    parser = _subparser(sub, name, help, description, example)
    return parser.add_subparsers(dest="verb", metavar="VERB", required=True)


def add_leaf(sub, name: str, help: str, description: str, example: str, use_case: tuple,
             token: str | None = None, extra=None) -> argparse.ArgumentParser:  # fmt: skip
    """A command that runs `use_case` = (app module, function, options class name). `token`:
    the help of its --token; `extra(parser)` adds settings flags of its own."""
    parser = _subparser(sub, name, help, description, example)
    parser.set_defaults(_use_case=use_case)

    def load(p: argparse.ArgumentParser) -> None:
        add_options(p, options_class(use_case))
        if extra is not None:
            extra(p)
        add_settings(p, token)

    parser.load = load
    return parser


def _subparser(sub, name, help, description, example):
    parser = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog="example:\n  " + example.strip().replace("\n", "\n  "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(_parser=parser)  # the innermost one answers an unknown option
    return parser


def add_settings(parser: argparse.ArgumentParser, token: str | None = None) -> None:
    """--root and --config (every command), --token (commands that call GitHub)."""
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
        help="config file (default: ci-budget.toml or [tool.ci-budget] in pyproject.toml at the root)",
    )
    if token is not None:
        parser.add_argument("--token", default=None, help=token)


def options_class(use_case: tuple) -> type:
    module, _, name = use_case
    return getattr(importlib.import_module(module), name)


def add_options(parser: argparse.ArgumentParser, cls: type) -> None:
    """One argument per field of the dataclass `cls` (see app.settings.option)."""
    import dataclasses
    import typing

    from ci_budget.app.settings import default_of, flag_of

    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        many, kind = _kind(hints[f.name])
        meta, flag, default = f.metadata, flag_of(f), default_of(f)
        kw: dict = {"help": meta["help"], "metavar": meta["metavar"]}
        if kind is bool:
            assert flag is not None  # a switch is never positional
            _add_switch(parser, f.name, flag, meta, default)
            continue
        if kind is not str:
            kw["type"] = kind
        if meta["choices"]:
            kw["choices"] = meta["choices"]
        if f.name == "format":
            kw["metavar"] = "{" + ",".join(meta["choices"]) + "}"
        if flag is None:  # positional
            kw["nargs"] = meta["nargs"]
            parser.add_argument(f.name, default=default, **kw)
        else:
            kw["metavar"] = kw["metavar"] or flag[2:].replace("-", "_").upper()
            if meta["nargs"]:
                kw["nargs"] = meta["nargs"]
            elif many:
                kw["action"] = "append"
            kw["required"] = meta["required"]
            parser.add_argument(flag, dest=f.name, default=default, **kw)


def _kind(hint) -> tuple[bool, type]:
    """(repeatable, value type) of a field's annotation: X, X | None, list[X], list[X] | None."""
    import types
    import typing

    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is list:
        return True, typing.get_args(hint)[0]
    return False, hint


def _add_switch(parser, dest: str, flag: str, meta, default: bool) -> None:
    if meta["off"]:
        group = parser.add_mutually_exclusive_group()
        # The help goes with the flag that changes something; the other is the default.
        on, off = ("the default", meta["help"]) if default else (meta["help"], "the default")
        group.add_argument(flag, dest=dest, action="store_true", help=on)
        group.add_argument(meta["off"], dest=dest, action="store_false", help=off)
        parser.set_defaults(**{dest: default})
        return
    parser.add_argument(flag, dest=dest, action="store_true", default=default, help=meta["help"])


def settings(args):
    """The `Settings` of a command from its --root/--config/--token (and a leaf's own)."""
    from ci_budget.app.settings import Settings

    root = getattr(args, "_root", None) or args.root
    return Settings(root, args.config, token=getattr(args, "token", None),
                    event_name=getattr(args, "event_name", None),
                    event_path=getattr(args, "event_path", None))  # fmt: skip


def call(args) -> int:
    """Run the leaf's use case with the options the namespace holds."""
    import dataclasses

    from ci_budget.app.settings import refuse_unused

    cls = options_class(args._use_case)
    options = cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})
    refuse_unused(options)
    module, function, _ = args._use_case
    run = getattr(importlib.import_module(module), function)
    return int(run(settings(args), options) or 0)
