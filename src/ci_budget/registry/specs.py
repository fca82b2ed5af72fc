"""`/rerun-test` specs: parse the command, validate each spec, resolve it against the registry.

Pure. The comment is read as sglang's handler reads it: invisible format characters (Unicode
category Cf: U+200E, zero-width spaces, a BOM) dropped, leading blank lines skipped, the first
line split on whitespace, quotes and backticks around a spec dropped. A spec names test files,
optionally narrowed to a class or a test:

    test/registered/x/test_a.py     repo path
    registered/x/test_a.py          relative to the test root's parent (`test/`, as sglang)
    x/test_a.py                     relative to the test root
    test_a.py                       bare file name, when exactly one test file has it
    test_*backend*.py               a glob: every `test_*.py` file it matches (whole files only)
    ...::Class   ...::Class::test   ...::Class.test (sglang's form, normalised to ::Class::test)

The comment text comes from anyone who can comment, so the rules are an allowlist: ASCII
letters, digits and `_ . / : -`, and in a file part the glob characters `* ? [ ]`, nothing
else. `[params]` ids are refused: naming the test function is enough and keeps brackets away
from every shell and pytest option parser. A glob never leaves plan: the matrix carries the
files it matched.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_budget.config import Config
from ci_budget.models import Registration
from ci_budget.registry.lookup import Registry, is_glob

COMMAND = "/rerun-test"
MAX_SPEC_CHARS = 200
MAX_LINE_CHARS = 2000
USAGE = f"{COMMAND}[@SHA] test/registered/dir/test_x.py[::Class[::test]] ..."

_ALLOWED = re.compile(r"[A-Za-z0-9_./:-]+")
_ALLOWED_GLOB = re.compile(r"[A-Za-z0-9_./:*?\[\]-]+")
_GLOB = set("*?[]")
_SHELL = set(";|&$`<>(){}!'\"\\#~")
_QUOTES = "\"'`"
_SHA = re.compile(r"[0-9a-f]{7,40}")


@dataclass
class Command:
    """The tokens after `/rerun-test` on a comment's first line, and what is wrong with them."""

    specs: list[str]
    problems: list[str] = field(default_factory=list)
    sha: str | None = None  # `/rerun-test@SHA`: the commit to run, 7-40 hex, lower case


@dataclass(frozen=True)
class Resolved:
    spec: str  # normalised: repo path, then ::Class or ::Class::test
    file: str
    runner_configs: tuple[str, ...]


@dataclass
class Resolution:
    accepted: list[Resolved] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "`spec`: why", one per refused spec
    refused_specs: list[str] = field(default_factory=list)  # the same specs, as given
    notes: list[str] = field(default_factory=list)  # about accepted specs (disabled files)


def show(text: str, limit: int = 60) -> str:
    """A spec as it can be quoted back in Markdown: code span, escapes, cut to `limit`."""
    cut = text if len(text) <= limit else text[:limit] + "..."
    safe = cut.encode("unicode_escape").decode("ascii").replace("`", "'")
    return f"`{safe}`"


def _char(c: str) -> str:
    if c.isprintable() and c.isascii() and c != "`":
        return f"'{c}'"
    return f"U+{ord(c):04X}"


def strip_format(text: str) -> str:
    """`text` without Unicode format characters (category Cf), which copy buttons and rich
    text paste invisibly (a path ending in U+200E names no file)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def parse_command(body: str, max_specs: int, command: str = COMMAND) -> Command | None:
    """None when the first line is not `/rerun-test ...` (or the configured `command`): then
    the comment is not for us."""
    first = strip_format(body).strip().partition("\n")[0].strip()
    word = first.split(maxsplit=1)[0] if first else ""
    if word != command and not word.startswith(command + "@"):
        if word.startswith(command):  # sglang runs `/rerun-tests x.py` as `/rerun-test x.py`
            return Command([], [f"{show(word)} is not a command; write `{command} SPEC...`"])
        return None
    if len(first) > MAX_LINE_CHARS:
        return Command(
            [], [f"the command line is {len(first)} characters; at most {MAX_LINE_CHARS}"]
        )
    sha = word[len(command) + 1 :].lower() if word != command else None
    if sha is not None and not _SHA.fullmatch(sha):
        return Command([], [f"{show('@' + sha)} is not a commit SHA (7 to 40 hex characters)"])
    specs = first[len(word) :].split()
    if not specs:
        return Command([], [f"no spec given; usage: {USAGE}"], sha)
    if len(specs) > max_specs:
        return Command(specs, [f"{len(specs)} specs given; at most {max_specs}"], sha)
    return Command(specs, sha=sha)


def unquote(spec: str) -> str:
    """A spec without the quotes or backticks around it and around its file part (a glob is
    written in backticks so that GitHub does not read its `*` as emphasis)."""
    path, sep, rest = spec.strip(_QUOTES).partition("::")
    return path.strip(_QUOTES) + sep + rest


def check_spec(spec: str, glob: bool = False) -> str | None:
    """Why `spec` is not acceptable as text, or None. Does not look at the registry. With
    `glob`, its file part may be a glob."""
    if len(spec) > MAX_SPEC_CHARS:
        return f"{len(spec)} characters; at most {MAX_SPEC_CHARS}"
    for c in spec:
        if c.isspace() or not c.isprintable():
            return f"contains whitespace or a non-printable character ({_char(c)})"
    for c in spec:
        if not c.isascii():
            return f"contains a non-ASCII character ({_char(c)})"
    path, sep, names = spec.partition("::")
    if glob and is_glob(path) and sep:
        return "a glob cannot be combined with ::Class; drop the ::... to rerun whole files"
    for c in names if glob else spec:
        if c in _GLOB:
            return (
                f"contains {_char(c)}: [parameter] ids are not supported; name test classes "
                "or functions"
                if glob
                else f"contains {_char(c)}: name one file, not a pattern"
            )
    for c in spec:
        if c in _SHELL:
            return f"contains the shell metacharacter {_char(c)}"
    allowed = _ALLOWED_GLOB if glob else _ALLOWED
    if not allowed.fullmatch(spec):
        bad = next(c for c in spec if not allowed.fullmatch(c))
        return f"contains {_char(bad)}; only letters, digits and _ . / : - are allowed"
    if spec.startswith("-"):
        return "starts with '-' (that would read as an option)"
    return None


def split_names(parts: list[str]) -> list[str] | str:
    """[Class] or [Class, test] from the parts after the path (sglang's `Class.test` too), or
    why they are not."""
    if len(parts) == 1 and "." in parts[0]:
        parts = parts[0].split(".")
    if len(parts) > 2:
        return "too many parts; use path::Class or path::Class::test"
    for name in parts:
        if not name.isidentifier():
            return f"{show(name)} is not a Python identifier"
    return parts


def split_spec(spec: str, root: str | None = None) -> tuple[str, list[str]] | str:
    """(path, [Class, test]) with sglang's Class.test normalised, or why the shape is wrong.

    `root` is the repository's absolute path: absolute specs inside it become repo-relative.
    """
    path, *parts = spec.split("::")
    if ":" in path:
        return "a single ':' in the path; use '::' before a class name"
    names = split_names(parts)
    if isinstance(names, str):
        return names
    if path.startswith("/"):
        if not root or not path.startswith(root.rstrip("/") + "/"):
            return "an absolute path outside the repository"
        path = path[len(root.rstrip("/")) + 1 :]
    while path.startswith("./"):
        path = path[2:]
    parts = path.split("/")
    if ".." in parts:
        return "'..' is not allowed; name a file inside the test tree"
    if any(p in ("", ".") for p in parts):
        return "not a normalised path (empty or '.' component)"
    return path, names


def _files(registry: Registry, path: str, spec: str) -> list[str] | str:
    """The files `path` names (a glob: all it matches), or why none."""
    if is_glob(path):
        bases = ["", registry.base] if registry.base else [""]
        tops = [registry.root, *registry.dirs] if "/" not in path else bases
        where = " or ".join(show(f"{t}/", 100) if t else "the repository root" for t in tops)
        return registry.expand(path) or (
            f"no test file matches {show(path, 100)} {'under' if '/' not in path else 'from'} "
            f"{where} (a glob matches `test_*.py` files only)"
        )
    found = registry.find(path)
    if isinstance(found, str):
        return [found]
    if not found:
        return "not a registered test file"
    more = "" if len(found) <= 10 else ", ..."
    listed = ", ".join(show(f, 100) for f in found[:10])
    return f"matches {len(found)} registered files: {listed}{more}; give the path"


def resolve(
    specs: Iterable[str],
    registrations: Iterable[Registration],
    config: Config,
    root: str | None = None,
    files: Iterable[str] = (),
) -> Resolution:
    """Accept the specs that name runnable test files; refuse the rest, each with a reason.
    A glob's matches are taken one by one: those that cannot run are refused by path. `files`
    are the test files of the configured rerun directories (`github.rerun-dirs`)."""
    registry = Registry(registrations, config, files)
    out = Resolution()
    seen: set[str] = set()

    def refuse(spec: str, why: str) -> None:
        if spec not in out.refused_specs:
            out.refused_specs.append(spec)
            out.refused.append(f"{show(spec)}: {why}")

    for given in specs:
        spec = unquote(given)
        why = check_spec(spec, glob=True)
        shape = why or split_spec(spec, root)
        if isinstance(shape, str):
            refuse(given, shape)
            continue
        path, names = shape
        found = _files(registry, path, spec)
        if isinstance(found, str):
            refuse(given, found)
            continue
        for file in found:
            configs = registry.runner_configs(file)
            if isinstance(configs, str):
                refuse(given if len(found) == 1 and not is_glob(path) else file, configs)
                continue
            normal = "::".join([file, *names])
            if normal not in seen:
                seen.add(normal)
                out.accepted.append(Resolved(normal, file, configs))
                if reason := registry.disabled(file):
                    out.notes.append(f"{show(file, 100)} is disabled ({reason}); it runs "
                                     "because it was asked for")  # fmt: skip
    # A whole-file spec already covers narrower specs of the same file.
    whole = {r.file for r in out.accepted if r.spec == r.file}
    out.accepted = [r for r in out.accepted if r.spec == r.file or r.file not in whole]
    return out
