"""Static scan of `register_*_ci(...)` calls, compatible with sglang's `ci_register.py`.

Only top-level expression statements calling a bare configured name count. Stricter than sglang
where sglang is silently wrong (a non-literal `nightly=`/`disabled=` is an error here, not
"enabled"), and every problem is reported with `path:line:col`, all in one pass. Sections: the
per-file scan, then the AST node helpers (literal values, their source text, argument type checks,
the `if __name__ == "__main__":` block).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ci_budget.config import Config
from ci_budget.models import Problem, Registration, RegistryScan

POSITIONAL = ("est_time", "suite", "nightly", "disabled")
STRING_PARAMS = ("suite", "stage", "runner_config", "disabled", "in_process_group")
MAX_EST_TIME = 1_000_000  # seconds, 11.6 days; sglang's largest is 4,800
NO_REGISTRATION = "no registration found (add a top-level register_*_ci(...) call)"


class FileScan:
    def __init__(self, rel: str, config: Config):
        self.rel = rel
        self.config = config
        self.names = config.register_functions
        self.keywords = tuple(config.registration_keywords)
        self.registrations: list[Registration] = []
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []

    def error(self, node: ast.expr | ast.stmt | ast.keyword, message: str) -> None:
        self.errors.append(
            Problem(file=self.rel, line=node.lineno, col=node.col_offset + 1, message=message)
        )

    def warn(self, node: ast.expr | ast.stmt | ast.keyword | None, message: str) -> None:
        line, col = (node.lineno, node.col_offset + 1) if node is not None else (1, 1)
        self.warnings.append(Problem(file=self.rel, line=line, col=col, message=message))

    def call(self, call: ast.Call, func: str) -> None:
        bound = self.arguments(call, func)
        if bound is None:
            return
        values, nodes, ok = bound
        ok = check_types(self, call, func, values, nodes) and ok
        if ok:
            self.record(call, func, values, nodes)

    def arguments(self, call: ast.Call, func: str):
        """(literal values, their nodes, ok) by parameter name; None for *args or **kwargs."""
        values: dict[str, object] = {}
        nodes: dict[str, ast.expr] = {}
        ok = True
        for node in call.args:
            if isinstance(node, ast.Starred):
                self.error(node, f"{func}(): *args are not supported")
                return None
        for kw in call.keywords:
            if kw.arg is None:
                self.error(kw.value, f"{func}(): **kwargs are not supported")
                return None
        if len(call.args) > len(POSITIONAL):
            self.error(
                call.args[len(POSITIONAL)],
                f"{func}(): too many positional arguments ({len(call.args)}; at most "
                f"{len(POSITIONAL)}: {', '.join(POSITIONAL)}; "
                f"{', '.join(self.keywords)} are keyword-only)",
            )
            ok = False
        for name, node in zip(POSITIONAL, call.args, strict=False):
            nodes[name] = node
        for kw in call.keywords:
            if kw.arg not in POSITIONAL + self.keywords:
                self.error(kw, f"{func}(): unknown argument '{kw.arg}'")
                ok = False
                continue
            if kw.arg in nodes:
                self.error(kw, f"{func}(): argument '{kw.arg}' given twice")
                ok = False
                continue
            nodes[kw.arg] = kw.value
        for name, node in nodes.items():
            try:
                values[name] = literal(node)
            except NotLiteral:
                self.error(
                    node,
                    f"{func}(): {name} must be a literal, not `{describe(node)}` "
                    "(registrations are read statically)",
                )
                ok = False
        # An explicit None means "not given", as in the function signature's defaults.
        for name in [n for n, v in values.items() if v is None and n != "est_time"]:
            del values[name], nodes[name]
        return values, nodes, ok

    def record(self, call: ast.Call, func: str, values: dict, nodes: dict) -> None:
        stage = values.get("stage")
        runner_config = values.get("runner_config")
        suite = f"{stage}-test-{runner_config}" if stage is not None else values["suite"]
        est = values["est_time"]
        self.registrations.append(
            Registration(
                file=self.rel,
                line=call.lineno,
                col=call.col_offset + 1,
                function=func,
                backend=self.names[func],
                est_time=float(est),
                suite=suite,
                stage=stage,
                runner_config=runner_config,
                nightly=values.get("nightly", False),
                disabled=values.get("disabled"),
                in_process_group=values.get("in_process_group"),
            )
        )
        # Only the backends this repository runs here: others' runner configs live elsewhere.
        if (
            runner_config is not None
            and self.names[func] in self.config.github.backends
            and self.config.runner(runner_config) is None
        ):
            self.warn(
                nodes["runner_config"],
                f"{func}(): runner_config '{runner_config}' is not a configured runner "
                "config (add it under [tool.ci-budget.runner-configs])",
            )

    def module(self, tree: ast.Module) -> None:
        calls = self.top_level(tree.body)
        self.stray_calls(tree, calls)
        self.finish(calls.has_main)

    def top_level(self, body: list[ast.stmt]) -> TopLevel:
        """Registrations among top-level statements; also whether a main block runs something."""
        seen = TopLevel()
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if isinstance(func, ast.Name) and func.id in self.names:
                    seen.ids.add(id(stmt.value))
                    self.call(stmt.value, func.id)
            elif isinstance(stmt, ast.If) and is_main_block_with_call(stmt):
                seen.has_main = True
        return seen

    def stray_calls(self, tree: ast.AST, seen: TopLevel) -> None:
        """Calls that look like registrations but are not: sglang ignores them silently."""
        stray = sorted(
            (n for n in ast.walk(tree) if isinstance(n, ast.Call) and id(n) not in seen.ids),
            key=lambda n: (n.lineno, n.col_offset),
        )
        for node in stray:
            func = node.func
            if isinstance(func, ast.Name) and func.id in self.names:
                self.warn(
                    node,
                    f"{func.id}() is not at module top level as a statement on its own; "
                    "it is not a registration",
                )
            elif isinstance(func, ast.Attribute) and func.attr in self.names:
                self.warn(
                    node,
                    f"{describe(func)}() is an attribute call; only a bare "
                    f"{func.attr}() call is a registration",
                )

    def finish(self, has_main: bool) -> None:
        mine = self.registrations
        if not mine and not self.errors:
            self.warn(None, NO_REGISTRATION)
        if any(r.enabled for r in mine) and not has_main and self.config.main_block != "ignore":
            problem = (
                'no `if __name__ == "__main__":` block that calls something; '
                "`python3 FILE` would run no test"
            )
            target = self.errors if self.config.main_block == "error" else self.warnings
            first = mine[0]
            target.append(Problem(file=self.rel, line=first.line, col=first.col, message=problem))

    def result(self) -> RegistryScan:
        self.warnings.sort(key=lambda p: (p.line, p.col))
        return RegistryScan(
            registrations=self.registrations, errors=self.errors, warnings=self.warnings
        )


class TopLevel:
    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.has_main = False


def mentions_registration(data: bytes, config: Config) -> bool:
    """Cheap pre-filter: a file that never names a configured function cannot register."""
    return any(name.encode() in data for name in config.register_functions)


def parse_error(rel: str, exc: Exception) -> RegistryScan:
    if isinstance(exc, SyntaxError):
        line, col, msg = exc.lineno or 1, exc.offset or 1, exc.msg
    else:  # ValueError: null bytes, bad encoding declarations
        line, col, msg = 1, 1, str(exc)
    return RegistryScan(
        errors=[Problem(file=rel, line=line, col=col, message=f"cannot parse: {msg}")]
    )


def scan_source(data: bytes | str, rel: str, config: Config) -> RegistryScan:
    """Scan one file's source by parsing all of it. Pure: no file system access."""
    raw = data.encode() if isinstance(data, str) else data
    scan = FileScan(rel, config)
    if not mentions_registration(raw, config):
        scan.warn(None, NO_REGISTRATION)
        return scan.result()
    try:
        tree = ast.parse(raw, filename=rel)
    except (SyntaxError, ValueError) as exc:
        return parse_error(rel, exc)
    scan.module(tree)
    return scan.result()


def merge(scans: Iterable[RegistryScan]) -> RegistryScan:
    out = RegistryScan()
    for s in scans:
        out.registrations.extend(s.registrations)
        out.errors.extend(s.errors)
        out.warnings.extend(s.warnings)
    return out


def select(
    scan: RegistryScan,
    suites: Iterable[str] = (),
    stages: Iterable[str] = (),
    runner_configs: Iterable[str] = (),
    backends: Iterable[str] = (),
) -> list[Registration]:
    """Registrations matching every given filter (an empty filter matches all)."""
    suites, stages, runners, backends = set(suites), set(stages), set(runner_configs), set(backends)
    return [
        r
        for r in scan.registrations
        if (not suites or r.suite in suites)
        and (not stages or r.stage in stages)
        and (not runners or r.runner_config in runners)
        and (not backends or r.backend in backends)
    ]


LISTED = 6  # at most this many known names are listed in full


def unknown(kind: str, value: str, known: Iterable[str], show=repr) -> str:
    """The one wording of a name that is not registered (`--suite`, `--stage`, a dispatched
    suite): the closest names, never the whole list of a large registry. `show` quotes a name
    (Markdown callers pass a code span)."""
    import difflib

    names = sorted({n for n in known if n})  # sglang registers `suite=""` (nightly NPU files)
    text = f"unknown {kind} {show(value if len(value) <= 80 else value[:80] + '...')}"
    close = [show(n) for n in difflib.get_close_matches(value[:200], names, n=3, cutoff=0.85)]
    if close:
        either = f"{', '.join(close[:-1])} or {close[-1]}" if len(close) > 1 else close[0]
        text += f"; did you mean {either}?"
    if not names:
        return text + f" (no {kind} is registered)"
    if len(names) <= LISTED:
        return text + f" (known: {', '.join(show(n) for n in names)})"
    return text + f" ({len(names)} {kind}s are registered; `ci-budget scan` lists them)"


# --- AST node helpers


class NotLiteral(Exception):
    pass


def literal(node: ast.expr) -> object:
    """A literal constant, including a signed number (`-5` parses as a unary op)."""
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(value := node.operand.value, (int, float))
        and not isinstance(value, bool)
    ):
        return -value if isinstance(node.op, ast.USub) else value
    raise NotLiteral


def describe(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every parsed node
        return type(node).__name__


def is_main_block_with_call(stmt: ast.If) -> bool:
    test = stmt.test
    if not (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    ):
        return False
    return any(isinstance(n, ast.Call) for body in stmt.body for n in ast.walk(body))


def check_types(scan, call: ast.Call, func: str, values: dict, nodes: dict) -> bool:
    """Whether a registration's literal arguments have the right types and shape; each problem
    goes to `scan` (its `error` and `warn`) with its position."""
    ok = _check_est_time(scan, call, func, values, nodes)
    for name in STRING_PARAMS:
        if name in values and not isinstance(values[name], str):
            scan.error(nodes[name], f"{func}(): {name} must be a string, not {values[name]!r}")
            ok = False
    if "nightly" in values and not isinstance(values["nightly"], bool):
        scan.error(
            nodes["nightly"],
            f"{func}(): nightly must be True or False, not {values['nightly']!r}",
        )
        ok = False
    has_stage, has_runner, has_suite = (
        "stage" in nodes,
        "runner_config" in nodes,
        "suite" in nodes,
    )
    if not (
        (has_stage and has_runner and not has_suite)
        or (not has_stage and not has_runner and has_suite)
    ):
        given = [
            n
            for n, present in (
                ("stage", has_stage),
                ("runner_config", has_runner),
                ("suite", has_suite),
            )
            if present
        ]
        scan.error(
            call,
            f"{func}(): give exactly one of (stage= and runner_config=) or suite; "
            f"got {', '.join(given) if given else 'none of them'}",
        )
        ok = False
    return ok


def _check_est_time(scan, call: ast.Call, func: str, values: dict, nodes: dict) -> bool:
    if "est_time" not in nodes:
        scan.error(call, f"{func}(): est_time is required")
        return False
    if "est_time" not in values:
        return True
    est = values["est_time"]
    if isinstance(est, bool) or not isinstance(est, (int, float)):
        scan.error(
            nodes["est_time"], f"{func}(): est_time must be a number of seconds, not {est!r}"
        )
        return False
    if est < 0:
        scan.error(nodes["est_time"], f"{func}(): est_time must be >= 0, not {est!r}")
        return False
    if not est <= MAX_EST_TIME:  # 1e999 is inf; a huge int is no float: neither adds up
        text = repr(est) if len(repr(est)) <= 20 else repr(est)[:12] + "..."
        scan.error(
            nodes["est_time"],
            f"{func}(): est_time must be at most {MAX_EST_TIME:,} seconds, not {text}",
        )
        return False
    if est == 0:
        scan.warn(
            nodes["est_time"],
            f"{func}(): est_time is 0: the file counts for nothing in its suite's "
            "budget and shard sizes",
        )
    return True
