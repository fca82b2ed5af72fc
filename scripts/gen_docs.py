"""Write the generated parts of the reference pages from the code, so they cannot drift from it.

    python scripts/gen_docs.py           # rewrite docs/commands.md and docs/configuration.md
    python scripts/gen_docs.py --check   # exit 1 naming each page that is not current

A page keeps its hand-written prose; only what stands between
`<!-- generated: NAME (scripts/gen_docs.py) -->` and `<!-- end generated: NAME -->` is rewritten:
- `command:NAME`: the options of `ci-budget NAME` (each of its verbs), from the argparse parser
  the use cases' options build (`cli/`): flags, defaults, help, example;
- `settings`: `--root`, `--config`, `--token`, which every command shares;
- `config`: every key of `ci-budget.toml` from the configuration model (`config.py` and its sections), its type,
  its default and, as its meaning, the comment written beside the field;
- `builtins`: the built-in runner configs, register functions, GPU names and dropped variables;
- `action-inputs`, `action-outputs`: `action.yml`'s.
tests/test_docs.py fails while a page is stale.
"""

from __future__ import annotations

import argparse
import ast
import functools
import io
import json
import re
import sys
import tokenize
import types
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

PAGES = ("docs/commands.md", "docs/configuration.md")
BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w:-]+) \(scripts/gen_docs.py\) -->\n)(?P<body>.*?)"
    r"(<!-- end generated: (?P=name) -->)",
    re.S,
)


def cell(text: object) -> str:
    """One table cell: one line, `|` kept as text."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(head: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# ---- the command line -------------------------------------------------------------------


def _spelling(action: argparse.Action) -> str:
    if not action.option_strings:
        name = action.metavar or action.dest
        return {"+": f"{name} …", "*": f"[{name} …]", "?": f"[{name}]"}.get(action.nargs, name)
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return flag
    choices = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
    metavar = action.metavar or choices or action.dest.upper()
    return f"{flag} {metavar}" + (" …" if action.nargs in ("+", "*") else "")


def _default(action: argparse.Action) -> str:
    value = action.default
    if value in (None, False, [], argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return f"`{value}`"


def _rows(parser: argparse.ArgumentParser, skip: set[str]) -> list[tuple]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if action.help is argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        if set(action.option_strings) & skip:
            continue
        help_text = formatter._expand_help(action) if action.help else ""
        if isinstance(action, argparse._AppendAction) and "repeatable" not in help_text:
            help_text += " (repeatable)"
        default = "" if "default" in help_text else _default(action)
        rows.append((f"`{_spelling(action)}`", default, help_text))
    return rows


SHARED = {"--root", "--config", "--token"}


def _leaf(parser: argparse.ArgumentParser, verb: bool) -> str:
    """A verb gets its heading and description; a command's own are the page's prose."""
    parser._loaded()
    out = [f"### `{parser.prog}`\n", f"{parser.description}\n"] if verb else []
    rows = _rows(parser, SHARED)
    token = any("--token" in a.option_strings for a in parser._actions)
    if rows:
        out.append(table(("option", "default", "meaning"), rows))
    shared = "`--root`, `--config`" + (", `--token`" if token else "")
    out.append(f"Also {shared} ([shared options](#shared-options)).\n")
    example = (parser.epilog or "").removeprefix("example:\n")
    lines = [line.strip() for line in example.splitlines() if line.strip()]
    if lines:
        out.append("```bash\n" + "\n".join(lines) + "\n```\n")
    return "\n".join(out)


def command_block(name: str) -> str:
    from ci_budget.cli import build_parser, leaves

    top = build_parser(lazy=True)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[name]
    if parser._defaults.get("_use_case") is not None:
        return _leaf(parser, verb=False)
    return "\n".join(_leaf(leaf, verb=True) for leaf in leaves(parser))


def settings_block() -> str:
    from ci_budget.cli.common import add_settings

    parser = argparse.ArgumentParser(prog="ci-budget", add_help=False)
    add_settings(parser, token="GitHub token (default: $GITHUB_TOKEN)")
    return table(("option", "default", "meaning"), _rows(parser, set()))


# ---- the configuration model ------------------------------------------------------------


def field_comments(path: Path) -> dict[tuple[str, str], str]:
    """(class, field) -> the comment beside the field in the source: the comment lines right
    above it, then any comment on its own lines."""
    source = path.read_text(encoding="utf-8")
    comments: dict[int, tuple[str, bool]] = {}  # line -> (text, alone on its line)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            alone = not tok.line[: tok.start[1]].strip()
            comments[tok.start[0]] = (tok.string.lstrip("#").strip(), alone)
    out = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            above, line = [], item.lineno - 1
            while line in comments and comments[line][1]:
                above.insert(0, comments[line][0])
                line -= 1
            beside = [comments[n][0] for n in range(item.lineno, item.end_lineno + 1)
                      if n in comments and not comments[n][1]]  # fmt: skip
            text = " ".join(above + beside).strip()
            if text:
                out[(node.name, item.target.id)] = text
    return out


def _type(hint, many: bool = False) -> str:
    """The type of a field as a reader says it; `many`: inside a list or table."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _type(args[0], many)
    if origin is typing.Literal:
        return " or ".join(f'`"{a}"`' for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a, many) for a in args if a is not type(None))
    if origin is list:
        return f"list of {_type(args[0], True)}"
    if origin is dict:
        return f"table of {_type(args[1], True)}"
    if isinstance(hint, type) and hint.__module__.startswith("ci_budget.config"):
        return "tables" if many else "table"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(hint, str(hint)) + ("s" if many else "")


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def _section(model, hint) -> type | None:
    """The Section model a field holds (itself, or as a table's values), if any."""
    from ci_budget.config import Section

    for candidate in (hint, *typing.get_args(hint)):
        if isinstance(candidate, type) and issubclass(candidate, Section):
            return candidate
    return None


def _source(model) -> Path:
    return Path(sys.modules[model.__module__].__file__).resolve()


@functools.cache
def _comments_in(path: Path) -> dict[tuple[str, str], str]:
    return field_comments(path)


def _comment(model, name: str) -> str | None:
    """The comment beside field `name` of `model`, in the module that defines it."""
    return _comments_in(_source(model)).get((model.__name__, name))


def config_rows(model, prefix: str) -> list[tuple]:
    from pydantic_core import PydanticUndefined

    rows = []
    hints = typing.get_type_hints(model, include_extras=True)
    for name, info in model.model_fields.items():
        key = prefix + name.replace("_", "-")
        nested = _section(model, hints[name])
        if nested is not None and typing.get_origin(hints[name]) is None:
            if nested.__doc__:  # a section that says what it is for
                rows.append((f"`{key}`", "table", "", nested.__doc__))
            rows += config_rows(nested, key + ".")
            continue
        meaning = _comment(model, name)
        if nested is not None and nested.__doc__:
            meaning = "; ".join(filter(None, [meaning, nested.__doc__]))
        if meaning is None and model.__doc__:  # the section's docstring speaks for its fields
            meaning = ""
        if meaning is None:
            raise SystemExit(
                f"{_source(model).relative_to(ROOT)}: {model.__name__}.{name}: write its meaning as a "
                "comment beside the field (the configuration page is generated from it)"
            )
        if nested is not None:  # a table of sections: one row per key of the section
            rows.append((f"`{key}.NAME`", "table", "", meaning))
            rows += config_rows(nested, key + ".NAME.")
            continue
        if info.default_factory is not None:
            default = info.default_factory()
        else:
            default = None if info.default is PydanticUndefined else info.default
        shown = "" if default in (None, {}, []) else f"`{_toml(default)}`"
        rows.append((f"`{key}`", _type(hints[name]), shown, meaning))
    return rows


def config_block() -> str:
    from ci_budget.config import Config

    rows = config_rows(Config, "")
    return table(("key", "type", "default", "meaning"), rows)


def builtins_block() -> str:
    from ci_budget.config import (
        DEFAULT_GPU_ARCH,
        DEFAULT_REGISTER_FUNCTIONS,
        DEFAULT_RUNNER_CONFIGS,
    )
    from ci_budget.runner.command import DEFAULT_DROP, NEVER_KEPT

    runners = [(f"`{n}`", _toml(r.runs_on), r.gpus, r.arch or "")
               for n, r in DEFAULT_RUNNER_CONFIGS.items()]  # fmt: skip
    by_arch: dict[str, list[str]] = {}
    for gpu, arch in DEFAULT_GPU_ARCH.items():
        by_arch.setdefault(arch, []).append(gpu)
    code = ", ".join
    return "\n".join(
        [
            "Runner configs (`runner-configs` entries override or add to these):\n",
            table(("name", "runs-on", "gpus", "arch"), runners),
            "Register functions (`register-functions`, a table here replaces the list): "
            + code(f"`{f}` → `{b}`" for f, b in DEFAULT_REGISTER_FUNCTIONS.items())
            + ".\n",
            "GPU names (whole words, any case) → architecture (`gpu-arch` merges over them): "
            + "; ".join(f"{code(g)} → `{a}`" for a, g in by_arch.items())
            + ".\n",
            "Dropped from the tests' environment (`env-drop` adds to them): "
            + code(f"`{n}`" for n in DEFAULT_DROP)
            + ". Never kept, whatever `env-keep` says: "
            + code(f"`{n}`" for n in NEVER_KEPT)
            + ".\n",
        ]
    )


# ---- action.yml ---------------------------------------------------------------------------


def _action() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def action_inputs_block() -> str:
    rows = []
    for name, spec in _action()["inputs"].items():
        default = spec.get("default", "")
        rows.append((f"`{name}`", f"`{default}`" if default != "" else "", spec["description"]))
    return table(("input", "default", "meaning"), rows)


def action_outputs_block() -> str:
    rows = [(f"`{n}`", s["description"]) for n, s in _action()["outputs"].items()]
    return table(("output", "meaning"), rows)


# ---- pages --------------------------------------------------------------------------------


def block(name: str) -> str:
    if name.startswith("command:"):
        return command_block(name.removeprefix("command:"))
    makers = {
        "settings": settings_block,
        "config": config_block,
        "builtins": builtins_block,
        "action-inputs": action_inputs_block,
        "action-outputs": action_outputs_block,
    }
    if name not in makers:
        raise SystemExit(f"no generated block named {name!r}")
    return makers[name]()


def render(text: str) -> str:
    """`text` with every generated block written afresh."""
    return BLOCK.sub(lambda m: m.group(1) + "\n" + block(m["name"]) + "\n" + m.group(4), text)


def stale(root: Path = ROOT) -> list[str]:
    """The pages whose generated blocks are not what the code gives now."""
    out = []
    for page in PAGES:
        text = (root / page).read_text(encoding="utf-8")
        if render(text) != text:
            out.append(page)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a page is stale")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for page in old:
            print(f"{page}: stale; run python scripts/gen_docs.py", file=sys.stderr)
        return 1 if old else 0
    for page in PAGES:
        path = ROOT / page
        path.write_text(render(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
