"""`ci-budget` command line. Each top-level command is one `add_<name>` in `cli.commands`,
which names the use case each of its leaves runs (`cli.common.add_leaf`); the leaf's flags come
from that use case's options, and its run is one `app` call.

The command declarations import only argparse at module level, and a leaf loads its use case's
module only when it parses or prints help, so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import sys

# one `add_<name>` in ci_budget.cli.commands per top-level command; the order shown in --help
COMMANDS = ["scan", "plan", "run", "report", "diff", "guard", "history"]

EPILOG = """\
examples:
  ci-budget scan                                   # registered files by suite
  ci-budget run --suite base-b-test-1-gpu-large --partition 0/2
  ci-budget report --results 'results/*.json'      # budget report from one or more shards
  ci-budget diff --base origin/main                # static report of a PR, no GPU
  ci-budget plan                                   # decide what a GitHub event runs

exit status: 0 fine, 1 the checked condition failed, 2 usage or input error.
Every command works on the repository it runs in (the nearest directory up holding a
ci-budget.toml or .git, else the current directory) or on --root DIR.
"""


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The whole command line; `lazy`: each leaf's options are added when it is used."""
    from ci_budget import __version__
    from ci_budget.cli import commands
    from ci_budget.cli.common import LazyParser

    parser = argparse.ArgumentParser(
        prog="ci-budget",
        description="Time budgets for registered GPU test suites.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ci-budget {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=LazyParser)
    for name in COMMANDS:
        getattr(commands, f"add_{name}")(sub)
    if not lazy:
        for leaf in leaves(parser):
            leaf._loaded()
    return parser


def leaves(parser: argparse.ArgumentParser):
    """Every parser that runs a use case, under `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from leaves(child) if child._defaults.get("_use_case") is None else [child]


# Options whose value may start with "-" ("-1/2"): argparse would take it for an option and
# answer "expected one argument"; glued as --opt=VALUE, the command's own check explains it.
GLUED = ("--partition",)


def _glue(argv: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in GLUED and i + 1 < len(argv) and argv[i + 1][1:2].isdigit():
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def _unknown(parser: argparse.ArgumentParser, extra: list[str]) -> None:
    """The command's own usage and error (exit 2) for what it does not take, with the closest
    option it has."""
    import difflib

    message = f"unrecognized arguments: {' '.join(extra)}"
    options = sorted(
        o for o, a in parser._option_string_actions.items() if a.help is not argparse.SUPPRESS
    )
    for word in extra:
        close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.7)
        if word.startswith("--") and close:
            message += f"; did you mean {close[0]}?"
            break
    parser.error(message)


def main(argv: list[str] | None = None) -> int:
    words = _glue(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser(lazy=True)
    args, extra = parser.parse_known_args(words)
    if extra:
        _unknown(getattr(args, "_parser", parser), extra)
    if getattr(args, "_use_case", None) is None:
        parser.print_help()
        return 2
    from ci_budget.app.settings import AppError
    from ci_budget.cli.common import call

    try:
        return call(args)
    except AppError as exc:  # the message may quote a PR's text: no workflow command from it
        from ci_budget.app.settings import log_text

        print(log_text(f"{args._parser.prog}: {exc}"), file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
