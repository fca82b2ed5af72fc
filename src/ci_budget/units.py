"""Seconds and percentages as every report, comment and message writes them: `790s`, `4.2s`,
`+190s`, `32%`, `+32%`. Pure; the one formatter, below every layer that writes numbers."""

from __future__ import annotations


def secs(value: float | None, sign: str = "") -> str:
    """Seconds as every report and message writes them: `4.2s`, `1,234s` (`sign="+"`: `+190s`),
    `-` for none."""
    if value is None:
        return "-"
    if abs(value) < 10:  # class setup and small files: whole seconds would read as 0s
        return f"{value:{sign}.1f}s"
    return f"{value:{sign},.0f}s"


def pct(ratio: float | None, sign: str = "") -> str:
    """A ratio as a percentage: `32%` (`sign="+"`: `+32%`), `-` for none."""
    return "-" if ratio is None else f"{ratio * 100:{sign}.0f}%"
