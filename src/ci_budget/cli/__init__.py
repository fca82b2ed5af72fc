"""`ci-budget` command line. Each subcommand lives in its own module with `add_parser` (argparse)
and `run`, which turns the arguments into `Settings` and options and makes one `app` call.

Subcommand modules import only argparse at module level so `--help` stays fast; heavy imports
(PyGithub, pydantic models, the runner) happen inside `run`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> module under ci_budget.cli; order is the order shown in --help
COMMANDS = [
    "scan",
    "run",
    "report",
    "plan",
    "arch",
    "arch_table",
    "guard",
    "history",
    "suggest",
    "conformance",
]

EPILOG = """\
examples:
  ci-budget scan                                   # registered files by suite
  ci-budget run --suite base-b-test-1-gpu-large --partition 0/2
  ci-budget report --results 'results/*.json'      # budget report from one or more shards
  ci-budget plan                                   # decide what a GitHub event runs

exit status: 0 fine, 1 the checked condition failed, 2 usage or input error.
Every command works on the repository it runs in (the nearest directory up holding a
ci-budget.toml or .git, else the current directory) or on --root DIR.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ci-budget",
        description="Time budgets for registered GPU test suites.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ci_budget import __version__

    parser.add_argument("--version", action="version", version=f"ci-budget {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"ci_budget.cli.{name}")
        sub_parser = module.add_parser(sub)
        sub_parser.set_defaults(_module=module)
    return parser


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
    options = sorted(parser._option_string_actions)
    for word in extra:
        close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.7)
        if word.startswith("--") and close:
            message += f"; did you mean {close[0]}?"
            break
    parser.error(message)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(_glue(sys.argv[1:] if argv is None else list(argv)))
    if extra:
        _unknown(getattr(args, "_parser", parser), extra)
    if getattr(args, "_module", None) is None:
        parser.print_help()
        return 2
    from ci_budget.app.errors import AppError

    try:
        return int(args._module.run(args) or 0)
    except AppError as exc:  # the message may quote a PR's text: no workflow command from it
        from ci_budget.render.escape import log_text

        print(log_text(f"ci-budget {args.command}: {exc}"), file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
