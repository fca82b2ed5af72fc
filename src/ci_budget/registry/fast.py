"""Fast registry scan: the same records and errors as parsing every file, at a fraction of the cost.

Parsing a whole test file builds thousands of AST nodes that a registry never looks at. A
registration is a top-level statement, normally right after the imports, so the fast path parses:
- the *prefix* of the file up to the end of its last column-0 `register_*_ci(` statement — a
  prefix that parses is a complete run of top-level statements, so its AST is the file's own;
- the *tail* from the last column-0 `if __name__` line, to see whether the main block runs something.
Anything the fast path cannot prove (a name or `__main__` between prefix and tail, a prefix or tail
that does not parse, no column-0 candidate) falls back to the full parse, so the output is identical
for every file that parses. The one difference, documented: a syntax error *between* the last
registration and the main block is not seen by the fast path (`ci-budget scan --full` finds it).
Pure: bytes in, scan out.
"""

from __future__ import annotations

import ast

from ci_budget.config import Config
from ci_budget.models import RegistryScan
from ci_budget.registry.parse import (
    NO_REGISTRATION,
    FileScan,
    mentions_registration,
    scan_source,
)

BOM = b"\xef\xbb\xbf"


def is_ident(c: int) -> bool:
    return c == 0x5F or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A or c >= 0x80


def call_sites(raw: bytes, names: list[bytes]) -> list[int] | None:
    """Offsets of column-0 `NAME(` lines, or None when some other call of a name exists
    (indented, after an attribute dot, ...): then only the full parse knows what it is."""
    found = []
    for name in names:
        pos = raw.find(name)
        while pos != -1:
            end = pos + len(name)
            if (pos and is_ident(raw[pos - 1]) and raw[:pos] != BOM) or (
                end < len(raw) and is_ident(raw[end])
            ):
                pos = raw.find(name, end)
                continue
            after = raw[end : end + 40].lstrip()
            if after.startswith(b"("):
                before = raw[max(0, pos - 40) : pos]
                if before.endswith(b"\n") or raw[:pos] in (b"", BOM):
                    found.append(pos)
                elif not before.rstrip(b" \t").endswith(b"def"):
                    return None  # a call that is not a top-level statement, or attribute call
            pos = raw.find(name, end)
    return sorted(found)


def statement_end(raw: bytes, start: int) -> int | None:
    """End (after the newline) of the call starting at `start`; None when unsure."""
    depth = 0
    i = raw.find(b"(", start)
    n = len(raw)
    while i < n:
        c = raw[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                nl = raw.find(b"\n", i)
                return n if nl == -1 else nl + 1
        elif c in b"'\"":
            if raw[i : i + 3] in (b'"""', b"'''"):
                return None  # a triple-quoted string inside the call: let the full parse decide
            close = raw.find(bytes([c]), i + 1)
            while close != -1 and raw[close - 1] == 0x5C:  # escaped quote
                close = raw.find(bytes([c]), close + 1)
            if close == -1:
                return None
            i = close
        elif c == 0x23:  # comment: skip to end of line
            nl = raw.find(b"\n", i)
            if nl == -1:
                return None
            i = nl
        i += 1
    return None


def scan_source_fast(raw: bytes, rel: str, config: Config) -> RegistryScan:
    """Same result as `registry.scan_source` for every file that parses, parsing only what counts."""
    if not mentions_registration(raw, config):
        scan = FileScan(rel, config)
        scan.warn(None, NO_REGISTRATION)
        return scan.result()
    names = [n.encode() for n in config.register_functions]
    candidates = call_sites(raw, names)
    if candidates is None:
        return scan_source(raw, rel, config)
    if not candidates:  # names only in imports, stubs or prose: no call, so no registration
        scan = FileScan(rel, config)
        scan.warn(None, NO_REGISTRATION)
        return scan.result()
    prefix_end = statement_end(raw, candidates[-1])
    if prefix_end is None:
        return scan_source(raw, rel, config)
    main_at = raw.rfind(b"\nif __name__")
    tail_start = main_at + 1 if main_at + 1 >= prefix_end else None
    middle = raw[prefix_end:tail_start] if tail_start is not None else raw[prefix_end:]
    if b"__main__" in middle or any(n in middle for n in names):
        return scan_source(raw, rel, config)
    try:
        prefix = ast.parse(raw[:prefix_end], filename=rel)
        tail = ast.parse(raw[tail_start:], filename=rel) if tail_start is not None else None
    except (SyntaxError, ValueError):
        return scan_source(raw, rel, config)  # the full parse reports the real error
    # Every call site of a name is a column-0 candidate, so there are no stray calls to report.
    scan = FileScan(rel, config)
    seen = scan.top_level(prefix.body)
    if len(seen.ids) != len(candidates):  # a candidate inside brackets or a string
        return scan_source(raw, rel, config)
    if tail is not None:
        ast.increment_lineno(tail, raw.count(b"\n", 0, tail_start))
        tail_seen = scan.top_level(tail.body)
        if not tail_seen.has_main and b"__main__" in raw[:prefix_end]:
            return scan_source(raw, rel, config)
        seen.has_main = seen.has_main or tail_seen.has_main
    scan.finish(seen.has_main)
    return scan.result()
