"""How a use case declares its options: one dataclass field each, its default, help and
command-line spelling written once, here in `app`. The command line is built from the fields
(`cli.common`) and its namespace passes straight back into the dataclass.

`option(...)` takes the default first (`list` for an empty list) and, in its metadata:
`flag` (default `--field-name`; `None` for a positional), `needs` (the field that must be set
for this one to apply: a flag that would be ignored is refused instead).
"""

from __future__ import annotations

from dataclasses import MISSING, Field, field, fields
from typing import Any

from ci_budget.app.errors import AppError

FORMATS = ("text", "json", "markdown")  # the one --format vocabulary; each command a subset
HISTORY_HELP = "timing history store: shard by measured p90 where it has passing runs"
MODEL_HELP = (
    "sglang-ci-stats model.json: per-file seconds and per-suite fits for shard sizes and "
    "splits (missing or unreadable: a warning, then est_time)"
)


def option(
    default: Any = MISSING,
    *,
    help: str,
    flag: str | None = "",
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
    nargs: str | None = None,
    required: bool = False,
    off: str | None = None,
    needs: str | None = None,
) -> Any:
    """A dataclass field that is also a command-line option. `flag=None` makes it positional;
    `off` names the flag that sets a boolean back to False."""
    meta = {
        "help": help,
        "flag": flag,
        "metavar": metavar,
        "choices": choices,
        "nargs": nargs,
        "required": required,
        "off": off,
        "needs": needs,
    }
    if default is list:
        return field(default_factory=list, metadata=meta)
    return field(default=default, metadata=meta)


def flag_of(f: Field) -> str | None:
    """The option's command-line flag (None for a positional)."""
    flag = f.metadata.get("flag", "")
    return "--" + f.name.replace("_", "-") if flag == "" else flag


def default_of(f: Field) -> Any:
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None if f.default is MISSING else f.default


def refuse_unused(options) -> None:
    """An option given whose `needs` is not: one line naming both, instead of ignoring it."""
    for f in fields(options):
        need = f.metadata.get("needs")
        if need and getattr(options, f.name) != default_of(f) and not getattr(options, need):
            needed = next(g for g in fields(options) if g.name == need)
            raise AppError(f"{flag_of(f)} applies only with {flag_of(needed)}")
