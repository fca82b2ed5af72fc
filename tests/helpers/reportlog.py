"""Class timings straight from a reportlog stream (the runner goes through `ReportLog`)."""

from __future__ import annotations

from collections.abc import Iterable

from ci_budget.models import ClassTiming
from ci_budget.results.timings import parse_reportlog


def classes_from_reportlog(lines: Iterable[str]) -> list[ClassTiming]:
    return parse_reportlog(lines).classes()
