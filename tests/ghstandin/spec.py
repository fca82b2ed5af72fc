"""GitHub's OpenAPI subset: request validation (openapi-core) and response examples."""

from __future__ import annotations

import copy
import json
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

SPEC_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "github" / "openapi-subset.json"
SERVER = "https://api.github.com"  # the spec's server; requests are validated as if sent there

# Query parameters whose description says they take GitHub's search syntax ("Understanding the
# search syntax": `>=2026-08-01`, `2026-08-01..2026-08-31`) while their schema says `date-time`;
# GitHub accepts the syntax, so it is checked here instead of against the schema.
SEARCH_SYNTAX = {"created"}
_DAY = r"\d{4}-\d\d-\d\d(?:T\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:\d\d)?)?"
_SEARCH_DATE = re.compile(rf"(?:[<>]=?)?{_DAY}|{_DAY}\.\.{_DAY}|\*\.\.{_DAY}|{_DAY}\.\.\*")

_lock = threading.Lock()  # openapi-core's caches are not documented as thread-safe


@lru_cache(maxsize=1)
def spec_dict() -> dict:
    return json.loads(SPEC_PATH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _openapi():
    from openapi_core import Config, OpenAPI

    # The description is GitHub's own and is checked once by a test (test_standin); checking it
    # again in every process took seconds, inside the first request's client timeout.
    return OpenAPI.from_dict(spec_dict(), config=Config(spec_validator_cls=None))


@lru_cache(maxsize=1)
def _operations() -> list[tuple[str, str, list[str], str]]:
    """(method, template, template parts, operationId) for every operation in the subset."""
    ops = []
    for template, item in spec_dict()["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and "operationId" in op:
                ops.append(
                    (method.upper(), template, template.strip("/").split("/"), op["operationId"])
                )
    return ops


GREEDY = "{path}"  # repos/get-content: the file path is one parameter with slashes in it


def match(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    """(operationId, path params) of the operation serving `method path`, or None."""
    parts = path.strip("/").split("/")
    best = None
    for op_method, _template, tparts, op_id in _operations():
        if tparts[-1] == GREEDY and len(parts) > len(tparts):  # a file path spans segments
            parts_here = parts[: len(tparts) - 1] + ["/".join(parts[len(tparts) - 1 :])]
        else:
            parts_here = parts
        if op_method != method or len(tparts) != len(parts_here):
            continue
        params: dict[str, str] = {}
        literal = 0
        for t, p in zip(tparts, parts_here, strict=True):
            if t.startswith("{") and t.endswith("}"):
                params[t[1:-1]] = p
            elif t == p:
                literal += 1
            else:
                break
        else:
            # the most literal template wins (`issues/comments/{id}` over `issues/{number}/...`)
            if best is None or literal > best[0]:
                best = (literal, op_id, params)
    return None if best is None else (best[1], best[2])


def validate(
    method: str, path: str, query: dict[str, list[str]], body: bytes, content_type: str | None
) -> str | None:
    """None when GitHub's description accepts the request, else why not (one line)."""
    from openapi_core.testing import MockRequest

    args = {k: v[-1] for k, v in query.items()}
    for name in SEARCH_SYNTAX.intersection(args):
        if not _SEARCH_DATE.fullmatch(args.pop(name)):
            return f"{method} {path}: {name}: not GitHub's date search syntax"
    request = MockRequest(
        SERVER,
        method.lower(),
        path,
        args=args,
        data=body or None,
        content_type=(content_type or "application/json").split(";")[0].strip(),
    )
    try:
        with _lock:
            _openapi().validate_request(request)
    except Exception as exc:  # openapi-core raises a family of errors; all mean "rejected"
        detail = exc.__cause__ or exc
        errors = getattr(detail, "schema_errors", None)
        if errors:
            detail = "; ".join(e.message for e in errors)
        return f"{method} {path}: {type(exc).__name__}: {detail}"
    return None


def example(name: str) -> Any:
    """A deep copy of `components.examples[name].value`."""
    return copy.deepcopy(spec_dict()["components"]["examples"][name]["value"])
