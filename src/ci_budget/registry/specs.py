"""`/rerun-test` specs: parse the command, validate each spec, resolve it against the registry.

Pure. A spec names one registered test file, optionally narrowed to a class or a test:

    test/registered/x/test_a.py     repo path
    x/test_a.py                     relative to the test root
    test_a.py                       bare file name, when exactly one registered file has it
    ...::Class   ...::Class::test   ...::Class.test (sglang's form, normalised to ::Class::test)

The comment text comes from anyone who can comment, so the rules are an allowlist: ASCII
letters, digits and `_ . / : -`, nothing else. Globs are refused outright (a glob that matches
nothing and one that matches too much are both surprises), and so are `[params]` ids: naming the
test function is enough and keeps brackets away from every shell and pytest option parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_budget.config import Config
from ci_budget.models import Registration

COMMAND = "/rerun-test"
MAX_SPEC_CHARS = 200
MAX_LINE_CHARS = 2000
USAGE = f"{COMMAND}[@SHA] test/registered/dir/test_x.py[::Class[::test]] ..."

_ALLOWED = re.compile(r"[A-Za-z0-9_./:-]+")
_GLOB = set("*?[]")
_SHELL = set(";|&$`<>(){}!'\"\\#~")
_SEPARATOR = re.compile(r"[ \t]+")
_WORD = re.compile(r"[^ \t]*")
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


def show(text: str, limit: int = 60) -> str:
    """A spec as it can be quoted back in Markdown: code span, escapes, cut to `limit`."""
    cut = text if len(text) <= limit else text[:limit] + "..."
    safe = cut.encode("unicode_escape").decode("ascii").replace("`", "'")
    return f"`{safe}`"


def _char(c: str) -> str:
    if c.isprintable() and c.isascii() and c != "`":
        return f"'{c}'"
    return f"U+{ord(c):04X}"


def parse_command(body: str, max_specs: int, command: str = COMMAND) -> Command | None:
    """None when the first line is not `/rerun-test ...` (or the configured `command`): then
    the comment is not for us."""
    first = body.partition("\n")[0].rstrip("\r").strip(" \t")
    word = _WORD.match(first).group()
    if word != command and not word.startswith(command + "@"):
        return None
    if len(first) > MAX_LINE_CHARS:
        return Command(
            [], [f"the command line is {len(first)} characters; at most {MAX_LINE_CHARS}"]
        )
    sha = word[len(command) + 1 :].lower() if word != command else None
    if sha is not None and not _SHA.fullmatch(sha):
        return Command([], [f"{show('@' + sha)} is not a commit SHA (7 to 40 hex characters)"])
    rest = first[len(word) :].strip(" \t")
    specs = _SEPARATOR.split(rest) if rest else []
    if not specs:
        return Command([], [f"no spec given; usage: {USAGE}"], sha)
    if len(specs) > max_specs:
        return Command(specs, [f"{len(specs)} specs given; at most {max_specs}"], sha)
    return Command(specs, sha=sha)


def check_spec(spec: str) -> str | None:
    """Why `spec` is not acceptable as text, or None. Does not look at the registry."""
    if len(spec) > MAX_SPEC_CHARS:
        return f"{len(spec)} characters; at most {MAX_SPEC_CHARS}"
    for c in spec:
        if c.isspace() or not c.isprintable():
            return f"contains whitespace or a non-printable character ({_char(c)})"
    for c in spec:
        if not c.isascii():
            return f"contains a non-ASCII character ({_char(c)})"
    for c in spec:
        if c in _GLOB:
            return (
                f"contains {_char(c)}: globs and [parameter] ids are not supported; "
                "name registered files, classes or test functions"
            )
    for c in spec:
        if c in _SHELL:
            return f"contains the shell metacharacter {_char(c)}"
    if not _ALLOWED.fullmatch(spec):
        bad = next(c for c in spec if not _ALLOWED.fullmatch(c))
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


class Registry:
    """Lookups from what people type to registered files."""

    def __init__(self, registrations: Iterable[Registration], config: Config):
        self.config = config
        self.by_file: dict[str, list[Registration]] = {}
        for reg in registrations:
            self.by_file.setdefault(reg.file, []).append(reg)
        self.root = config.test_root.strip("/")

    def usable(self, file: str) -> list[Registration]:
        backends = set(self.config.github.backends)
        return [r for r in self.by_file[file] if r.enabled and r.backend in backends]

    def find(self, path: str) -> str | list[str]:
        """The one registered file `path` names, or the candidates (none, or several)."""
        for candidate in (path, f"{self.root}/{path}" if self.root else path):
            if candidate in self.by_file:
                return candidate
        named = sorted(f for f in self.by_file if f.rpartition("/")[2] == path)
        usable = [f for f in named if self.usable(f)] or named
        return usable[0] if len(usable) == 1 else usable

    def runner_configs(self, file: str) -> tuple[str, ...] | str:
        """Runner configs `file` runs on for the configured backends, or why it cannot run."""
        regs = self.by_file[file]
        backends = self.config.github.backends
        usable = self.usable(file)
        if not usable:
            mine = [r for r in regs if r.backend in backends]
            if mine:
                return f"registered but disabled ({mine[0].disabled})"
            found = sorted({r.backend for r in regs})
            return (
                f"registered for {', '.join(found)}, not for {', '.join(backends)} "
                "(the backends this repository runs here)"
            )
        names = []
        for reg in usable:
            if reg.runner_config and reg.runner_config not in names:
                names.append(reg.runner_config)
        if not names:
            return (
                f"registered in suite '{usable[0].suite}' without a runner_config; "
                "cannot tell which runner to use"
            )
        unknown = [n for n in names if self.config.runner(n) is None]
        if unknown:
            return f"runner config '{unknown[0]}' is not configured"
        return tuple(names)


def resolve(
    specs: Iterable[str],
    registrations: Iterable[Registration],
    config: Config,
    root: str | None = None,
) -> Resolution:
    """Accept specs that name runnable registered files; refuse the rest, each with a reason."""
    registry = Registry(registrations, config)
    out = Resolution()
    seen: set[str] = set()
    for spec in specs:
        why = check_spec(spec)
        if why is None:
            shape = split_spec(spec, root)
            if isinstance(shape, str):
                why = shape
        if why is None:
            path, names = shape
            found = registry.find(path)
            if isinstance(found, list):
                why = (
                    f"matches {len(found)} registered files: "
                    + ", ".join(show(f, 100) for f in found[:10])
                    + ("" if len(found) <= 10 else ", ...")
                    + "; give the path"
                    if found
                    else "not a registered test file"
                )
            else:
                configs = registry.runner_configs(found)
                if isinstance(configs, str):
                    why = configs
                else:
                    normal = "::".join([found, *names])
                    if normal not in seen:
                        seen.add(normal)
                        out.accepted.append(Resolved(normal, found, configs))
                    continue
        out.refused.append(f"{show(spec)}: {why}")
    # A whole-file spec already covers narrower specs of the same file.
    whole = {r.file for r in out.accepted if r.spec == r.file}
    out.accepted = [r for r in out.accepted if r.spec == r.file or r.file not in whole]
    return out
