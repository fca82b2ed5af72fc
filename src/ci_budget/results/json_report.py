"""pytest-json-report files decoded fast and in pieces, by a schema of just the fields used.

A 100,000-test report is ~50 MiB; a whole-file `json.loads` builds every key of every test
(keywords, metadata, tracebacks) and needs about 5x the file in memory. Here the file is read a
few MiB at a time: the `tests` array is cut at each item's start (`{"nodeid": ...`, which can
only be structural: a quote inside a JSON string is always escaped), every piece is decoded by
msgspec into a small typed object that skips every other key, and only the timings are kept.
Each piece must decode as exactly one test, and the document around the array must decode too,
so a wrong cut cannot pass. Anything the schema does not describe exactly (a duration given as a
string, NaN, a BOM, a nested object that starts with "nodeid", ...) returns None, and the caller
takes the plain path (`json.loads` + `timings.file_results_from_json_report`), which gives the
same results or the exact error: the fast path never decides anything alone. Pure: chunks of
bytes in, models out.
"""

from __future__ import annotations

import gc
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from ci_budget.models import FileResult, TestTiming
from ci_budget.results.phases import (
    crash_message,
    normalise_properties,
    outcome_of,
    typed_timing,
)
from ci_budget.results.timings import JsonReportFiles


class Phase(msgspec.Struct):
    duration: float | None = None
    outcome: str = "passed"
    crash: Any = None
    longrepr: Any = None


class Test(msgspec.Struct):
    nodeid: str
    setup: Phase | None = None
    call: Phase | None = None
    teardown: Phase | None = None
    user_properties: Any = None


class Collector(msgspec.Struct):
    """A collector without its `result` list (one entry per collected test: skipped unread)."""

    nodeid: Any = None
    outcome: Any = None
    longrepr: Any = None
    crash: Any = None


class JsonReport(msgspec.Struct):
    tests: list[msgspec.Raw]
    collectors: list[Collector] | msgspec.UnsetType = msgspec.UNSET


_REPORT = msgspec.json.Decoder(JsonReport)
_TEST = msgspec.json.Decoder(Test)
_TESTS = msgspec.json.Decoder(list[Test])
_TESTS_KEY = re.compile(rb'"tests"\s*:\s*\[')
_ITEM = re.compile(rb'\{\s*"nodeid"\s*:')
_BLANK = b" \t\r\n"


class _NotPlain(Exception):
    """Not cut cleanly: the plain path decides."""


def _timing(test: Test) -> TestTiming:
    """`timings.json_timing` for a decoded test: the same rules, read by attribute."""
    setup, call, teardown = test.setup, test.call, test.teardown
    props = test.user_properties
    props = {} if props is None else normalise_properties(props)
    if (
        setup is not None
        and call is not None
        and teardown is not None
        and setup.outcome == call.outcome == teardown.outcome == "passed"
    ):  # the common case, spelt out: 100,000s of tests go through here
        durations = (setup.duration or 0.0, call.duration or 0.0, teardown.duration or 0.0)
        return typed_timing(test.nodeid, "passed", durations, props, None)
    message = None
    for phase in (setup, call, teardown):
        if phase is not None and phase.outcome == "failed":
            message = crash_message({"crash": phase.crash, "longrepr": phase.longrepr})
            break
    outcome = outcome_of(
        setup.outcome if setup else None,
        call.outcome if call else None,
        teardown.outcome if teardown else ("passed" if setup else None),
    )
    durations = tuple(float(p.duration or 0.0) if p else 0.0 for p in (setup, call, teardown))
    return typed_timing(test.nodeid, outcome, durations, props, message)


# A key or first test start split across reads is found by searching again from this far back;
# one with more blanks inside than this is left to the plain path (never wrong, only slower).
_SEAM = 64
# So much text after the key with no test start in it: not a report's array of tests.
_FIRST_ITEM_WITHIN = 1 << 16


def _head(chunks: Iterator[bytes]) -> tuple[JsonReport, bytearray]:
    """(the document before the `tests` array, decoded; `[` and the text from its first item
    on). Its own function so that nothing of the head (in a real report the collectors, 0.3x
    the file) is still referenced once the tests are read."""
    buf = bytearray()
    key = None
    for chunk in chunks:
        at = max(0, len(buf) - _SEAM)  # before this read
        buf += chunk
        if key := _TESTS_KEY.search(buf, at):
            break
    if key is None:
        raise _NotPlain
    end = key.end()
    rest = buf[end:]
    # What comes before the array, closed with an empty one: the collectors, and a check of
    # the document's shape (a "tests" key inside another value does not close like this).
    del buf[end - 1 :]
    buf += b"[]}"
    head = _REPORT.decode(buf)
    del buf, key
    at = 0
    for chunk in itertools.chain((b"",), chunks):
        rest += chunk
        first = _ITEM.search(rest, at)
        if first is not None:
            if rest[: first.start()].strip(_BLANK):
                break  # an item that does not start with its nodeid
            return head, bytearray(b"[") + rest[first.start() :]
        if rest.strip(_BLANK)[:1] not in (b"", b"{") or len(rest) > _FIRST_ITEM_WITHIN:
            break  # empty, or not an array of objects that start with their nodeid
        at = max(0, len(rest) - _SEAM)
    raise _NotPlain


def _cut(chunks: Iterator[bytes], files: JsonReportFiles) -> tuple[JsonReport, bytes]:
    """Feed every test but the last to `files`; (the document before the array, decoded; the
    text from the last item's start). The text read is kept in one buffer that starts with
    `[`: each read's whole tests are decoded from it in place, as one array, and dropped."""
    head, buf = _head(chunks)
    for chunk in itertools.chain((b"",), chunks):
        buf += chunk
        last = last_item(buf, 2)
        if last is None:
            continue
        # Every whole item before the last start, decoded as one array: a cut inside an item
        # (a nested object that starts with "nodeid") leaves an array that does not decode.
        comma = last - 1
        while buf[comma] in _BLANK:
            comma -= 1
        if buf[comma] != 0x2C:  # `,`
            raise _NotPlain
        buf[comma] = 0x5D  # `]` closes the array
        with memoryview(buf) as view, view[: comma + 1] as items:
            tests = _TESTS.decode(items)
        for test in tests:
            files.add_timing(_timing(test))
        del buf[1:last]
    return head, bytes(buf[1:])


_NODEID = b'"nodeid"'
_SPACE = frozenset(b" \t\n\r\f\v")  # what `\s` matches in a bytes pattern


def last_item(buf: bytes | bytearray, lo: int = 1) -> int | None:
    """Where the last match of `_ITEM` at or after `lo` starts (None: there is none), found
    from the end: matches cannot overlap (each holds one `{`, its first byte), so the last is
    the one whose `"nodeid"` is furthest right."""
    end = len(buf)
    while (key := buf.rfind(_NODEID, lo, end)) >= lo:
        start = key
        while start > 0 and buf[start - 1] in _SPACE:
            start -= 1
        if start > lo and buf[start - 1] == 0x7B and _ITEM.match(buf, start - 1):  # `{`
            return start - 1
        end = key + len(_NODEID) - 1  # a `"nodeid"` further left
    return None


def decode(chunks: Iterable[bytes]) -> list[FileResult] | None:
    """The report's per-file results, or None when the plain path must decide."""
    gc_was_on = gc.isenabled()
    # Cyclic GC off while 100,000s of acyclic objects are built: it would rescan them over and over.
    gc.disable()
    try:
        files = JsonReportFiles()
        head, tail = _cut(iter(chunks), files)
        # The rest of the document, from the last item on.
        rest = _REPORT.decode(b'{"tests": [' + tail)
        if len(rest.tests) != 1 or _TESTS_KEY.search(tail):
            raise _NotPlain  # a second "tests" key: json.loads would keep the last
        if head.collectors is not msgspec.UNSET and rest.collectors is not msgspec.UNSET:
            raise _NotPlain  # two "collectors" keys: likewise
        files.add_timing(_timing(_TEST.decode(rest.tests[0])))
        collectors = head.collectors if rest.collectors is msgspec.UNSET else rest.collectors
        for item in collectors or ():
            files.add_collector(msgspec.structs.asdict(item))
        return files.results()
    except (_NotPlain, msgspec.DecodeError, msgspec.ValidationError):
        return None
    except (KeyError, TypeError, ValueError):
        return None
    finally:
        if gc_was_on:
            # What was built is 100,000s of acyclic objects that live until the process ends:
            # frozen, later collections skip them instead of rescanning them all each time.
            gc.freeze()
            gc.enable()
