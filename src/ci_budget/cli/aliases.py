"""The spellings from before the CLI was drawn around its concepts, kept for one release:
command names, flags and --format values. Each works as its new spelling and prints one notice
line on stderr. Everything here goes in the next release."""

from __future__ import annotations

import argparse

NOTICE = "ci-budget: {old} is now {new}; the old name goes in the next release"
OLD_FORMATS = {"table": "text", "terminal": "text"}

RENAMED = {
    ("arch",): ("guard", "check"),
    ("arch-table",): ("guard", "fill"),
    ("suggest",): ("history", "suggest"),
    ("history", "import-logs"): ("history", "import"),
}


# Flags whose feature is gone: accepted with their value, ignored, and named in one notice.
SCAN_CACHE_GONE = (
    "ci-budget: --cache is ignored: the scan cache was removed (it saved under 2×, "
    "docs/performance.md); the flag goes in the next release"
)
REMOVED = {"scan": {"--cache": SCAN_CACHE_GONE}, "diff": {"--cache": SCAN_CACHE_GONE}}


class Refused(Exception):
    """An old spelling given with flags its new command does not take."""


def renamed(argv: list[str]) -> tuple[list[str], list[str]]:
    """(argv with an old command name replaced by the new one, the notices to print)."""
    for old, new in RENAMED.items():
        if tuple(argv[: len(old)]) == old:
            line = NOTICE.format(old=f"'{' '.join(old)}'", new=f"'{' '.join(new)}'")
            return [*new, *argv[len(old) :]], [line]
    if argv[:1] == ["report"] and any(_flag(a) == "--base" for a in argv[1:]):
        return _static_report(argv)
    return argv, []


def _flag(arg: str) -> str:
    return arg.split("=", 1)[0]


def _static_report(argv: list[str]) -> tuple[list[str], list[str]]:
    """`report --base REF` is `diff --base REF`; a flag of report's that diff does not take is
    refused (it used to be ignored)."""
    from dataclasses import fields

    from ci_budget.app.diff import DiffOptions
    from ci_budget.app.options import flag_of
    from ci_budget.app.report import ReportOptions

    takes = {flag_of(f) for f in fields(DiffOptions)}
    only_report = {flag_of(f) for f in fields(ReportOptions)} - takes
    given = [a for a in argv[1:] if _flag(a) in only_report]
    if given:
        names = ", ".join(dict.fromkeys(_flag(a) for a in given))
        raise Refused(
            f"{names}: not for the static report ('report --base' is now 'diff', which "
            "reads no run results)"
        )
    line = NOTICE.format(old="'report --base'", new="'diff --base'")
    return ["diff", *argv[1:]], [line]


def notice(namespace, line: str) -> None:
    """Keep `line` to print once, after parsing (`notices`)."""
    seen = list(getattr(namespace, "_notices", ()))
    if line not in seen:
        seen.append(line)
    namespace._notices = seen


def notices(namespace) -> list[str]:
    return list(getattr(namespace, "_notices", ()))


class Old(argparse.Action):
    """An old flag: stores as the new one does, with its notice. An old positional (`to`) is
    kept apart until `positionals` knows whether the new flag was given too."""

    def __init__(self, option_strings, dest, old, new, many=False, to=None, convert=None, **kw):
        super().__init__(option_strings, dest, **kw)
        self.old, self.new, self.many, self.to, self.convert = old, new, many, to, convert

    def __call__(self, parser, namespace, values, option_string=None):
        notice(namespace, NOTICE.format(old=self.old, new=self.new))
        if self.to is not None:
            values = (self.to, self.convert(values), self.metavar, self.new)
        elif self.many:
            values = [*(getattr(namespace, self.dest, None) or []), values]
        setattr(namespace, self.dest, values)


def positionals(args) -> None:
    """Each old positional's value into its new flag's field; both given is an error."""
    from ci_budget.app.errors import AppError

    for key, held in list(vars(args).items()):
        if key.startswith("_old_") and held is not None:
            dest, value, metavar, new = held
            if getattr(args, dest) not in (None, value):
                flag = new.strip("'").split()[-2]
                raise AppError(f"given both as {metavar} and as {flag}: give {flag} only")
            setattr(args, dest, value)


class Removed(argparse.Action):
    """A removed flag: its value is taken and dropped, and its notice kept."""

    def __init__(self, option_strings, dest, line, **kw):
        super().__init__(option_strings, dest, **kw)
        self.line = line

    def __call__(self, parser, namespace, values, option_string=None):
        notice(namespace, self.line)


def add_removed(parser: argparse.ArgumentParser, leaf: str) -> None:
    """The removed flags of `leaf` (`scan`, `diff`), hidden from --help."""
    for flag, line in REMOVED.get(leaf, {}).items():
        parser.add_argument(flag, metavar="FILE", action=Removed, line=line,
                            dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                            help=argparse.SUPPRESS)  # fmt: skip


class Format(argparse.Action):
    """--format from the one vocabulary (text|json|markdown, each command a subset); the old
    `table` and `terminal` are `text`, with a notice."""

    def __init__(self, option_strings, dest, allowed, **kw):
        super().__init__(option_strings, dest, **kw)
        self.allowed = allowed

    def __call__(self, parser, namespace, value, option_string=None):
        if value in OLD_FORMATS and OLD_FORMATS[value] in self.allowed:
            notice(
                namespace,
                NOTICE.format(old=f"--format {value}", new=f"--format {OLD_FORMATS[value]}"),
            )
            value = OLD_FORMATS[value]
        if value not in self.allowed:
            choices = ", ".join(repr(c) for c in self.allowed)
            parser.error(f"argument --format: invalid choice: {value!r} (choose from {choices})")
        setattr(namespace, self.dest, value)
