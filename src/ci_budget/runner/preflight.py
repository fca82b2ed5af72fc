"""Checks before any file runs: every named class and test exists, and the tests' interpreter
has pytest. One clear error up front instead of every file failing on its own."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

from ci_budget.sharding.select import Job

_PLAIN_BASES = {"TestCase", "unittest.TestCase", "object"}


def _methods(tree: ast.Module) -> dict[str, set[str]]:
    """Class -> its test methods, for classes that inherit none (no mixins, no test bases)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and all(
            ast.unparse(b) in _PLAIN_BASES for b in node.bases
        ):
            out[node.name] = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return out


def _top_level_names(tree: ast.Module) -> set[str] | None:
    """Names a module binds at top level, or None when that cannot be known statically (a
    star import)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def missing_selection(root: Path, job: Job) -> str | None:
    """`no class TestX in FILE` when a spec names a class (or test function) the file does not
    define: said before running, instead of pytest's exit 4 after it."""
    try:
        source = (root / job.path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names, methods = _top_level_names(tree), _methods(tree)
    if names is None:
        return None
    for selector in job.selection:
        parts = [p.split("[")[0] for p in selector.removeprefix("::").split("::")]
        if parts[0] not in names:
            what = "test function" if parts[0].startswith("test") else "class"
            return f"no {what} {parts[0]} in {job.path}"
        if len(parts) > 1 and parts[0] in methods and parts[1] not in methods[parts[0]]:
            return f"no test {parts[1]} in class {parts[0]} of {job.path}"
    return None


# Found, not imported: importing pytest would cost a second interpreter's worth of start-up.
# The message is the one a failed import prints.
_PYTEST_PROBE = (
    "import importlib.util as u, sys\n"
    "u.find_spec('pytest') or sys.exit(\"ModuleNotFoundError: No module named 'pytest'\")"
)


class PytestProbe:
    """Whether `python` can run pytest, asked now and read later: the interpreter starts
    while ci-budget scans the tree."""

    def __init__(self, python: str, env=None, wrap=None):
        """`env`: the tests' environment (the interpreter's start-up runs its site-packages'
        .pth files); `wrap`: the sandbox's command prefix, when there is one."""
        cmd = [python, "-c", _PYTEST_PROBE]
        try:
            self.proc: subprocess.Popen | None = subprocess.Popen(
                wrap(cmd) if wrap else cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=None if env is None else dict(env),
            )
            self.error = None
        except OSError as exc:
            self.proc, self.error = None, str(exc)

    def stop(self) -> None:
        """Not needed after all (the run stopped first): end the probe."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def missing(self) -> str | None:
        """Why the interpreter cannot run pytest (the last line of its error), or None."""
        if self.proc is None:
            return self.error
        try:
            out, err = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired as exc:
            self.proc.kill()
            self.proc.communicate()
            return str(exc)
        if self.proc.returncode == 0:
            return None
        lines = (err or out).strip().splitlines()
        return lines[-1] if lines else f"exit {self.proc.returncode}"
