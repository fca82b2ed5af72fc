"""Time-boxed work: a file keeps working until its process is a given number of seconds old.

The example's budget statuses (`over`, `near`, `ok`) are ratios of measured time to est_time.
Work sized in iterations lands in a different band on a loaded machine than on an idle one;
work that runs until a wall-clock mark, counted from the process start (interpreter and imports
included, as ci-budget counts them), lands in the same band on both.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

_IMPORTED = time.monotonic()


def process_age() -> float:
    """Seconds since this process started (Linux /proc), else since this module was imported."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        # The command name may hold spaces: field 22 (start time) counts from after its ')'.
        start_ticks = int(stat[stat.rfind(b")") + 2 :].split()[19])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic() - _IMPORTED


def work_until(mark: float, step: Callable[[int], object]) -> int:
    """Run `step(i)` at least once, and again while another step fits before the process is
    `mark` seconds old; then wait out the rest. Returns how many steps ran."""
    done, longest = 0, 0.0
    while True:
        began = time.monotonic()
        step(done)
        done += 1
        longest = max(longest, time.monotonic() - began)
        if process_age() + longest >= mark:
            break
    left = mark - process_age()
    if left > 0:
        time.sleep(left)
    return done
