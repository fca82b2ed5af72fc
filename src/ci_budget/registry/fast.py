"""Fast registry scan: the same records and errors as parsing every file, at a fraction of the cost.

A registration is a top-level statement, normally right after the imports, so rather than the
whole file (thousands of AST nodes a registry never looks at) the fast path parses:
- the *registrations*: from the first column-0 `register_*_ci(` line to the end of the last one's
  statement. A lexer (strings, comments, brackets, line joins) proves the first line starts a new
  top-level statement; else the whole prefix of the file up to there is parsed (a prefix that
  parses is a complete run of top-level statements, so its AST is the file's own);
- the *tail* from the last column-0 `if __name__` line, to see whether the main block runs
  something (the plain `if __name__ == "__main__":` + calls form is recognised without parsing).
Anything it cannot prove (a name or `__main__` outside the parsed parts, a part that does not
parse, an f-string or encoding declaration before the registrations, no column-0 candidate)
falls back to the full parse: the same output for every file that parses. Not seen: a syntax
error outside the registrations and the main block (`scan --full` finds it). Pure. It pays: 6x
less wall time for `scan` of a real sglang checkout (docs/performance.md).
"""

from __future__ import annotations

import ast
import re
import sys

from ci_budget.config import Config
from ci_budget.models import RegistryScan
from ci_budget.registry.parse import NO_REGISTRATION, FileScan, mentions_registration, scan_source

BOM = b"\xef\xbb\xbf"
# What the lexer stops at: a comment, a quote, a bracket, a backslash.
EVENT = re.compile(rb"[#'\"()\[\]{}\\]")
STRING_PREFIX = b"rRbBuUfF"
# Up to 3.11 the tokenizer reads an f-string as a plain string; from 3.12 its braces may hold
# the same quotes, which this lexer does not follow (it then leaves the file to the parser).
FSTRING_NESTS = sys.version_info >= (3, 12)
CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)  # PEP 263
# `if __name__ == "__main__":` and a block of plain calls (`unittest.main()`), at the end.
_NAME = rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_ARG = rb"(?:[A-Za-z_]\w*=)?(?:" + _NAME + rb"|\d+)"
_CALL = _NAME + rb"\((?:" + _ARG + rb"(?:, ?" + _ARG + rb")*)?\)[ \t]*\r?\n"
PLAIN_MAIN = re.compile(
    rb"if __name__ == (?:\"__main__\"|'__main__'):[ \t]*\r?\n"
    rb"(?P<ind>[ \t]+)" + _CALL + rb"(?:(?P=ind)" + _CALL + rb")*[ \t\r\n]*"
)


def is_ident(c: int) -> bool:
    return c == 0x5F or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A or c >= 0x80


def _next_code(raw: bytes, at: int) -> bytes:
    """Up to 40 bytes of what follows `at`, blanks and whole comments skipped (a call may go on
    after a comment); empty when that is more than a few lines away."""
    for _ in range(5):
        window = raw[at : at + 40]
        after = window.lstrip()
        if after[:1] != b"#":
            return after
        at = raw.find(b"\n", at + len(window) - len(after))  # the end of the comment's line
        if at == -1:
            return b""
    return b""


def name_sites(raw: bytes, names: list[bytes]) -> tuple[list, list, list] | None:
    """Offsets of (column-0 `NAME(` lines, other `NAME(` calls: indented or after an attribute
    dot, other mentions: imports, stubs, prose); None when unsure what one is."""
    calls, others, loose = [], [], []
    for name in names:
        pos = raw.find(name)
        while pos != -1:
            end = pos + len(name)
            if (pos and is_ident(raw[pos - 1]) and raw[:pos] != BOM) or (
                end < len(raw) and is_ident(raw[end])
            ):
                pos = raw.find(name, end)
                continue
            after = _next_code(raw, end)
            before = raw[max(0, pos - 40) : pos]
            if (not after and end + 40 < len(raw)) or after[:1] in (b"#", b"\\"):
                return None  # a line join or many blanks: a call may follow unseen
            if not after.startswith(b"(") or before.rstrip(b" \t").endswith(b"def"):
                loose.append(pos)
            elif before.endswith(b"\n") or raw[:pos] in (b"", BOM):
                calls.append(pos)
            else:
                others.append(pos)
            pos = raw.find(name, end)
    return sorted(calls), sorted(others), sorted(loose)


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


def _string_end(raw: bytes, at: int, end: int) -> int | None:
    """End of the string literal whose opening quote is at `at`; None when unsure (an f-string,
    whose braces may hold quotes, or no close before `end`)."""
    lead = at
    while lead > 0 and raw[lead - 1] in STRING_PREFIX and at - lead < 2:
        lead -= 1
    if (FSTRING_NESTS and b"f" in raw[lead:at].lower()) or (lead and is_ident(raw[lead - 1])):
        return None  # an f-string that may nest quotes, or a quote right after a name
    quote = raw[at : at + 3] if raw[at : at + 3] in (b'"""', b"'''") else raw[at : at + 1]
    pos = at + len(quote)
    while True:
        close = raw.find(quote, pos, end)
        if close == -1 or (len(quote) == 1 and b"\n" in raw[pos:close]):
            return None
        slashes = 0
        while raw[close - 1 - slashes] == 0x5C:
            slashes += 1
        if slashes % 2 == 0:  # not an escaped quote (the same rule in raw strings)
            return close + len(quote)
        pos = close + 1


def starts_statement(raw: bytes, end: int) -> bool:
    """Whether the line starting at `end` is a new top-level statement: not inside a string or
    brackets, not joined to the line before, not the body a `:` or a decorator line asks for.
    False whenever unsure."""
    depth, pos = 0, 0
    while (event := EVENT.search(raw, pos, end)) is not None:
        at, c = event.start(), raw[event.start()]
        if c == 0x23:  # a comment, to the end of its line
            newline = raw.find(b"\n", at, end)
            pos = end if newline == -1 else newline
        elif c in b"([{":
            depth, pos = depth + 1, at + 1
        elif c in b")]}":
            depth, pos = depth - 1, at + 1
        elif c == 0x5C:  # outside a string, only a line join is valid
            return False
        else:
            string_end = _string_end(raw, at, end)
            if string_end is None:
                return False
            pos = string_end
        if depth < 0:
            return False
    if depth:
        return False
    lines = (ln.strip() for ln in reversed(raw[:end].splitlines()))
    last = next((ln for ln in lines if ln and not ln.startswith(b"#")), b"")
    return not (last.endswith(b":") or last.startswith(b"@") or b"#" in last and b":" in last)


def _parse_from(raw: bytes, start: int, end: int, rel: str) -> ast.Module:
    """`raw[start:end]` (whole lines) parsed with the file's own line numbers."""
    return ast.parse(b"\n" * raw.count(b"\n", 0, start) + raw[start:end], filename=rel)


def reads_plainly(raw: bytes) -> bool:
    """Whether any whole lines of the file parse alone as they do in place: UTF-8 without a BOM
    or another declared encoding, `\\n` or `\\r\\n` line ends, not the grammar-changing future
    import, no null byte."""
    cookie = CODING.search(b"\n".join(raw.split(b"\n", 2)[:2]))
    return not (
        raw.startswith(BOM)
        or (cookie and cookie.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"))
        or raw.count(b"\r") != raw.count(b"\r\n")
        or b"barry_as_FLUFL" in raw
        or b"\0" in raw
    )


def _registrations_start(raw: bytes, first: int) -> int:
    """The first candidate's line when it provably starts a top-level statement and no main
    block comes before it, else the start of the file."""
    plain = first and b"__main__" not in raw[:first] and starts_statement(raw, first)
    return first if plain else 0


def _code_line(raw: bytes, at: int) -> bool:
    return at < len(raw) and raw[at] not in b" \t\r\n\x0c#"


def _enclosing(raw: bytes, at: int) -> tuple[int, int] | None:
    """(start, end) of the top-level statement around offset `at`: from the nearest column-0
    line that provably starts a statement to the next one (or the end). None when unsure."""
    lo = raw.rfind(b"\n", 0, at) + 1
    tries = 20  # column-0 lines tried each way (each try lexes from the start)
    while not (_code_line(raw, lo) and (tries := tries - 1) >= 0 and starts_statement(raw, lo)):
        if lo == 0 or tries < 0:
            return None
        lo = raw.rfind(b"\n", 0, lo - 1) + 1
    tries = 20
    hi = raw.find(b"\n", at)
    while hi != -1:
        hi += 1
        if _code_line(raw, hi) and ((tries := tries - 1) < 0 or starts_statement(raw, hi)):
            return (lo, hi) if tries >= 0 else None
        hi = raw.find(b"\n", hi)
    return lo, len(raw)


def _stray_chunks(raw: bytes, others: list[int], regs: tuple[int, int], body_end: int):
    """The statements holding calls of a name that are not registrations (indented, attribute
    calls), outside the registrations `regs` and the main block; None when unsure."""
    chunks: list[tuple[int, int]] = []
    for at in others:
        if chunks and chunks[-1][0] <= at < chunks[-1][1]:
            continue
        span = _enclosing(raw, at)
        if span is None or b"__main__" in raw[span[0] : span[1]]:
            return None
        if not (span[1] <= regs[0] or regs[1] <= span[0] and span[1] <= body_end):
            return None
        chunks.append(span)
    return chunks


def _no_registration(rel: str, config: Config) -> RegistryScan:
    scan = FileScan(rel, config)
    scan.warn(None, NO_REGISTRATION)
    return scan.result()


def scan_source_fast(raw: bytes, rel: str, config: Config) -> RegistryScan:
    """Same result as `registry.scan_source` for every file that parses, parsing only what counts."""
    if not mentions_registration(raw, config):
        return _no_registration(rel, config)
    names = [n.encode() for n in config.register_functions]
    sites = name_sites(raw, names)
    if sites is not None and not sites[0] and not sites[1]:
        return _no_registration(rel, config)  # names only in imports, stubs or prose: no call
    fast = _scan_parts(raw, rel, config, sites) if sites and reads_plainly(raw) else None
    return scan_source(raw, rel, config) if fast is None else fast


def _scan_parts(raw: bytes, rel: str, config: Config, sites) -> RegistryScan | None:
    """The scan from the registrations, the statements around other calls of a name and the
    main block; None when the full parse must decide."""
    calls, others, _ = sites
    prefix_end = statement_end(raw, calls[-1]) if calls else 0
    if prefix_end is None:
        return None
    main_at = raw.rfind(b"\nif __name__")
    tail_start = main_at + 1 if main_at != -1 and main_at + 1 >= prefix_end else None
    body_end = len(raw) if tail_start is None else tail_start
    if b"__main__" in raw[prefix_end:body_end]:
        return None
    start = _registrations_start(raw, calls[0]) if calls else 0
    chunks = _stray_chunks(raw, others, (start, prefix_end), body_end)
    if chunks is None:
        return None
    plain_main = tail_start is not None and PLAIN_MAIN.fullmatch(raw, tail_start) is not None
    try:
        prefix = _parse_from(raw, start, prefix_end, rel)
        strays = [_parse_from(raw, lo, hi, rel) for lo, hi in chunks]
        parse_tail = tail_start is not None and not plain_main
        tail = _parse_from(raw, tail_start, len(raw), rel) if parse_tail else None
    except (SyntaxError, ValueError):
        return None  # the full parse reports the real error
    scan = FileScan(rel, config)
    seen = scan.top_level(prefix.body)
    if len(seen.ids) != len(calls):  # a candidate inside brackets or a string
        return None
    for tree in strays:
        if scan.top_level(tree.body).ids:  # a registration the name scan did not see
            return None
        scan.stray_calls(tree, seen)
    if tail_start is not None:
        tail_main = plain_main or scan.top_level(tail.body).has_main
        if not tail_main and b"__main__" in raw[:prefix_end]:
            return None
        seen.has_main = seen.has_main or tail_main
    scan.finish(seen.has_main)
    return scan.result()
