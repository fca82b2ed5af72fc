"""The part of GitHub Actions' expression language the workflows here use, evaluated strictly.

Anything else (an unknown function, context, operator or input) raises `Unsupported`, so a
workflow that needs more than this harness understands fails the test instead of passing it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|<=|>=|&&|\|\||[<>!().\[\],*])"
    r"|(?P<name>[A-Za-z_][\w-]*))"
)
TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.S)
STATUS_FUNCTIONS = ("always", "success", "failure", "cancelled")


class Unsupported(Exception):
    """An expression this harness does not understand: the test must fail, not guess."""


class Filtered(list):
    """The result of an object filter (`labels.*`): a property of it is that property of each."""


class Strict(dict):
    """A context whose unknown keys are mistakes (a typo in `inputs.` or `steps.`), not null."""

    def __init__(self, what: str, data: Mapping[str, Any]):
        super().__init__(data)
        self.what = what


def _tokens(text: str) -> list[tuple[str, Any]]:
    out, pos, text = [], 0, text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Unsupported(f"cannot read expression at {text[pos:]!r} in {text!r}")
        pos = m.end()
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "num":
            out.append(("lit", float(value) if "." in value else int(value)))
        elif kind == "str":
            out.append(("lit", value[1:-1].replace("''", "'")))
        elif kind == "name" and value in ("true", "false", "null"):
            out.append(("lit", {"true": True, "false": False, "null": None}[value]))
        else:
            out.append((kind, value))
    return out


def truthy(value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def _equal(a: Any, b: Any) -> bool:
    """GitHub's ==: strings case-insensitively; values of different types as numbers (null and
    '' are both 0, so `null == ''`); objects and arrays only as the same instance."""
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b):
        return a is b if isinstance(a, (dict, list)) else a == b
    return _number(a) == _number(b)


def _order(a: Any, b: Any, op: str) -> bool:
    """<, <=, >, >=: strings compare case-insensitively, anything else as numbers (NaN: false)."""
    if isinstance(a, str) and isinstance(b, str):
        a, b = a.casefold(), b.casefold()
    else:
        a, b = _number(a), _number(b)
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        raise Unsupported(f"an object or array cannot be put in a string: {value!r}")
    return str(value)


class _Parser:
    def __init__(self, text: str, contexts: Mapping[str, Any], functions: Mapping[str, Callable]):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.contexts = contexts
        self.functions = functions
        self.dry = 0  # inside the side of && / || that GitHub does not evaluate

    def peek(self) -> tuple[str, Any] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, Any]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise Unsupported(f"expected {value or 'more'} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise Unsupported(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self._maybe(self.and_, skip=truthy(value))
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self._maybe(self.cmp, skip=not truthy(value))
            value = right if truthy(value) else value
        return value

    def _maybe(self, parse: Callable[[], Any], skip: bool) -> Any:
        """Short-circuit like GitHub: the skipped side is parsed (syntax is checked), not run."""
        self.dry += skip
        try:
            return parse()
        finally:
            self.dry -= skip

    def cmp(self) -> Any:
        value = self.unary()
        tok = self.peek()
        if tok in (("op", "=="), ("op", "!=")):
            self.take()
            same = _equal(value, self.unary())
            return same if tok[1] == "==" else not same
        if tok in (("op", "<"), ("op", "<="), ("op", ">"), ("op", ">=")):
            self.take()
            return _order(value, self.unary(), tok[1])
        return value

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        value, path = self.primary()
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                kind, key = self.take()
                if (kind, key) == ("op", "*"):
                    items = value if isinstance(value, list) else list((value or {}).values())
                    value, path = Filtered(items), f"{path}.*"
                    continue
                if kind != "name":
                    raise Unsupported(f"bad property {key!r} in {self.text!r}")
            else:
                key = self.or_()
                self.take("]")
            value = self._index(value, key, path)
            path = f"{path}.{key}"
        return value

    def _index(self, value: Any, key: Any, path: str) -> Any:
        if isinstance(value, Filtered):
            found = (self._index(item, key, path) for item in value)
            return Filtered(item for item in found if item is not None)
        if isinstance(value, list):
            idx = int(_number(key)) if not isinstance(key, str) or key.isdigit() else None
            return value[idx] if idx is not None and 0 <= idx < len(value) else None
        if not isinstance(value, dict):
            return None  # GitHub: a property of null or of a string is null
        for k, v in value.items():
            if isinstance(key, str) and k.casefold() == key.casefold():
                return v
        if isinstance(value, Strict):
            raise Unsupported(f"{path}.{key}: no such {value.what} in {self.text!r}")
        return None

    def primary(self) -> tuple[Any, str]:
        kind, value = self.take()
        if kind == "lit":
            return value, repr(value)
        if kind == "op" and value == "(":
            inner = self.or_()
            self.take(")")
            return inner, "(...)"
        if kind != "name":
            raise Unsupported(f"unexpected {value!r} in {self.text!r}")
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            fn = self.functions.get(value.casefold())
            if fn is None:
                raise Unsupported(f"function {value}() is not supported ({self.text!r})")
            return (None if self.dry else fn(*args)), f"{value}()"
        for name, ctx in self.contexts.items():
            if name.casefold() == value.casefold():
                return ctx, name
        raise Unsupported(f"context {value!r} is not available here ({self.text!r})")


def _join(items: Any, sep: str = ",") -> str:
    if isinstance(items, list):
        return sep.join(to_string(x) for x in items)
    return to_string(items)


def _contains(haystack: Any, needle: Any) -> bool:
    if isinstance(haystack, list):
        return any(_equal(x, needle) for x in haystack)
    return to_string(needle).casefold() in to_string(haystack).casefold()


def _from_json(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        raise Unsupported(f"fromJSON() of {text!r}: GitHub fails the job here")
    return json.loads(text)


def _format(fmt: str, *args: Any) -> str:
    return re.sub(r"\{(\d+)\}", lambda m: to_string(args[int(m.group(1))]), fmt)


BASE_FUNCTIONS: dict[str, Callable] = {
    "fromjson": _from_json,
    "tojson": lambda v: json.dumps(v, indent=2),
    "join": _join,
    "contains": _contains,
    "startswith": lambda a, b: to_string(a).casefold().startswith(to_string(b).casefold()),
    "endswith": lambda a, b: to_string(a).casefold().endswith(to_string(b).casefold()),
    "format": _format,
}


def evaluate(
    text: str, contexts: Mapping[str, Any], status: Mapping[str, bool] | None = None
) -> Any:
    """One expression (the inside of `${{ }}`, or an `if:`)."""
    functions = dict(BASE_FUNCTIONS)
    for name in STATUS_FUNCTIONS:
        if status is not None and name in status:
            functions[name] = lambda _v=status[name]: _v
    return _Parser(text, contexts, functions).parse()


def render(value: Any, contexts: Mapping[str, Any]) -> Any:
    """A YAML value with `${{ }}` templates: a lone template keeps its type, text is joined."""
    if isinstance(value, dict):
        return {k: render(v, contexts) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, contexts) for v in value]
    if not isinstance(value, str) or "${{" not in value:
        return value
    lone = TEMPLATE.fullmatch(value.strip())
    if lone:
        return evaluate(lone.group(1), contexts)
    return TEMPLATE.sub(lambda m: to_string(evaluate(m.group(1), contexts)), value)


def condition(text: Any, contexts: Mapping[str, Any], status: Mapping[str, bool]) -> bool:
    """An `if:`: without a status function it means `success() && (...)`, as on GitHub."""
    if text is None:
        return status["success"]
    if isinstance(text, bool):
        return text and status["success"]
    expr = str(text).strip()
    lone = TEMPLATE.fullmatch(expr)
    if lone:
        expr = lone.group(1).strip()
    elif "${{" in expr:
        raise Unsupported(f"if: mixing text and ${{{{ }}}} is always true on GitHub: {expr!r}")
    if not re.search(r"\b(always|success|failure|cancelled)\s*\(", expr):
        expr = f"success() && ({expr})"
    return truthy(evaluate(expr, contexts, status))
