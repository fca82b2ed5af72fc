"""From what people type in `/rerun-test` to test files and the runner configs they run on. Pure.

The files a spec may name: every registered file (disabled and nightly ones too: naming a
file is asking for it), and the unregistered test files of the configured rerun directories
(`github.rerun-dirs`, sglang's multimodal tests), which run where their path says. A path is
looked up as given, under the test root, and relative to the test root's parent (sglang's
`registered/x/test_a.py`, written from `test/`); a bare file name must be unique; a glob
(`*`, `?`, `[...]`) matches `test_*.py` files under the test root and the rerun directories, as
sglang's handler globs them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from ci_budget.config import Config
from ci_budget.models import Registration

GLOB_CHARS = frozenset("*?[")


def is_glob(path: str) -> bool:
    return bool(GLOB_CHARS & set(path))


def _reach(parts: list[str], pats: list[str]) -> list[bool]:
    """reach[i]: the glob matches the path's first i components, `**` standing for any number
    of them. One pass per glob component over the path's (comment text chooses the glob:
    `**/**/…` must not take exponential time)."""
    reach = [True] + [False] * len(parts)
    for pat in pats:
        if pat == "**":
            first = reach.index(True) if True in reach else len(reach)
            reach = [i >= first for i in range(len(reach))]
        else:
            reach = [False] + [
                reach[i] and fnmatch.fnmatchcase(parts[i], pat) for i in range(len(parts))
            ]
    return reach


def glob_hits(pattern: str, path: str) -> bool:
    """`path` matches `pattern` as `glob.glob(pattern, recursive=True)` would find it, or lies
    below a folder that does (glob finds the folder; sglang then takes its test files). The
    empty start matches only a glob of `**` alone, which matches every path as well."""
    return any(_reach(path.split("/"), pattern.split("/")))


def prefixes(directory: str) -> list[str]:
    """The spellings of a rerun directory a spec may start with: the repository path and each
    shorter tail of two or more components (`sglang/multimodal_gen/test`, ...)."""
    parts = directory.strip("/").split("/")
    return ["/".join(parts[i:]) for i in range(max(len(parts) - 1, 1))]


class Registry:
    """Lookups from what people type to test files."""

    def __init__(
        self, registrations: Iterable[Registration], config: Config, files: Iterable[str] = ()
    ):
        self.config = config
        self.by_file: dict[str, list[Registration]] = {}
        for reg in registrations:
            self.by_file.setdefault(reg.file, []).append(reg)
        self.root = config.test_root.strip("/")
        self.base = self.root.rpartition("/")[0]  # sglang's paths are written from `test/`
        self.dirs = {d.strip("/"): rule for d, rule in config.github.rerun_dirs.items()}
        self.extra = sorted(
            f
            for f in files
            if f not in self.by_file and any(f.startswith(d + "/") for d in self.dirs)
        )

    def known(self, path: str) -> bool:
        return path in self.by_file or path in self.extra

    def _under_roots(self, path: str) -> str | None:
        """The root (the test root or a rerun directory) `path` lies under ("" for any path
        when the test root is the repository)."""
        for top in (*self.dirs, self.root):
            if not top or path.startswith(top + "/"):
                return top
        return None

    def find(self, path: str) -> str | list[str]:
        """The one file `path` names, or the candidates (none, or several)."""
        for directory in self.dirs:
            for prefix in prefixes(directory):
                if path.startswith(prefix + "/"):
                    full = directory + path[len(prefix) :]
                    return full if self.known(full) else []
        tails = [path] + [f"{top}/{path}" for top in (self.root, self.base) if top]
        for candidate in tails:
            if self.known(candidate):
                return candidate
        if "/" in path:
            return []
        mine = [f for f in [*self.by_file, *self.extra] if f.rpartition("/")[2] == path]
        named = sorted(f for f in mine if self._under_roots(f)) or sorted(mine)
        return named[0] if len(named) == 1 else named

    def expand(self, pattern: str) -> list[str]:
        """The test files a glob matches, sorted."""
        if self.base and pattern.startswith(self.base + "/"):
            pattern = pattern[len(self.base) + 1 :]
        out = set()
        for path in [*self.by_file, *self.extra]:
            top = self._under_roots(path)
            name = path.rpartition("/")[2]
            if top is None or not (name.startswith("test_") and name.endswith(".py")):
                continue
            if "/" in pattern:
                inside = self.base and path.startswith(self.base + "/")
                bases = [path] + ([path[len(self.base) + 1 :]] if inside else [])
                hit = any(glob_hits(pattern, p) for p in bases)
            else:
                hit = glob_hits("**/" + pattern, path[len(top) + 1 :] if top else path)
            if hit:
                out.add(path)
        return sorted(out)

    def _extra_runner(self, file: str) -> str:
        directory = next(d for d in self.dirs if file.startswith(d + "/"))
        rule = self.dirs[directory]
        return next((r for key, r in rule.path_runners.items() if key in file), rule.runner)

    def runner_configs(self, file: str) -> tuple[str, ...] | str:
        """Runner configs `file` runs on for the configured backends, or why it cannot run.
        Registrations naming a runner_config decide; else those whose suite has rerun runner
        configs (`github.rerun-suites`); else each runs where its suite runs, or on the runner
        config named like its backend (`cpu`)."""
        if file in self.extra:
            names = [self._extra_runner(file)]
        else:
            backends = self.config.github.backends
            mine = [r for r in self.by_file[file] if r.backend in backends]
            if not mine:
                found = sorted({r.backend for r in self.by_file[file]})
                return (
                    f"registered for {', '.join(found)}, not for {', '.join(backends)} "
                    "(the backends this repository runs here)"
                )
            suites = self.config.github.rerun_suites
            names = [r.runner_config for r in mine if r.runner_config]
            if not names:
                names = [n for r in mine if not r.runner_config for n in suites.get(r.suite, [])]
            if not names:
                names = [n for n in map(self._routed, mine) if n]
            if not names:
                return (
                    f"registered in suite '{mine[0].suite}' without a runner_config; "
                    "cannot tell which runner to use"
                )
        names = list(dict.fromkeys(names))
        unknown = [n for n in names if self.config.runner(n) is None]
        if unknown:
            return f"runner config '{unknown[0]}' is not configured"
        return tuple(names)

    def _routed(self, reg: Registration) -> str | None:
        suite = self.config.suite_runner(reg.suite) if reg.suite else None
        if suite:
            return suite
        return reg.backend if self.config.runner(reg.backend) else None

    def disabled(self, file: str) -> str | None:
        """Why a file is disabled, when every registration that runs it is."""
        regs = [r for r in self.by_file.get(file, []) if r.backend in self.config.github.backends]
        if regs and not any(r.enabled for r in regs):
            return regs[0].disabled
        return None
