"""Synthetic GitHub Actions job logs in the shape sglang's CI writes them.

Every line carries GitHub's timestamp prefix (7 fractional digits, `Z`); the test step echoes its
`run_suite.py` command line (as GitHub shows a `run:` script, expressions substituted); each file
gets run_suite-style Begin/End lines; a retried file shows its `[CI Retry]` lines; a file that
timed out for good shows `✗ TIMEOUT: ... after N seconds`; the job ends with the TIMINGS block:
one JSON object per executed file, its latest attempt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

WORKSPACE = "/actions-runner/_work/sglang/sglang"


@dataclass
class Ran:
    file: str  # repository-relative, e.g. test/registered/x/test_a.py
    elapsed: int
    passed: bool = True
    retried: bool = False  # a first attempt failed; this is the second
    timed_out: bool = False  # the final attempt timed out


class Clock:
    def __init__(self, start: datetime):
        self.now = start

    def stamp(self, seconds: float = 0.0) -> str:
        self.now += timedelta(seconds=seconds)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond:06d}0Z"


def job_log(
    start: datetime,
    suite: str,
    files: list[Ran],
    index: int | None = None,
    size: int | None = None,
    *,
    echo_command: bool = True,
    blocks: int = 1,
    cut_in_block: bool = False,
    malformed: str | None = None,
) -> str:
    """One job's log. `blocks=2` prints the block twice (a step run twice: the second one is
    what counts); `cut_in_block` ends the log after the block's first entry and half a line;
    `malformed` is a line put inside the block."""
    clock = Clock(start)
    out: list[str] = []

    def say(text: str, seconds: float = 0.01) -> None:
        for line in text.split("\n"):
            out.append(f"{clock.stamp(seconds)} {line}")

    say("Current runner version: '2.328.0'")
    say(f"Runner name: 'gpu-runner-{index or 0}'")
    say("##[group]Run actions/checkout@v4", 2)
    say("##[endgroup]")
    if echo_command:
        partition = ""
        if index is not None:
            partition = f"  --auto-partition-id {index} \\\n  --auto-partition-size {size} \\\n"
        say(
            "##[group]Run cd test/\ncd test/\n"
            f"python3 run_suite.py --hw cuda --suite {suite} \\\n{partition}"
            "  --partition-model-file /tmp/partition-model.json \\\n  --timeout-per-file 1800\n"
            "shell: /usr/bin/bash -e {0}\n##[endgroup]",
            30,
        )
    for number, ran in enumerate(files):
        rel = ran.file.removeprefix("test/")
        say(f".\n.\nBegin ({number}/{len(files) - 1}):\npython3 {WORKSPACE}/{ran.file}\n.\n.")
        if ran.retried:
            say("AssertionError: 0.81 not greater than 0.82 (accuracy)", ran.elapsed)
            say(f"\n[CI Retry] {rel} failed with accuracy\n[CI Retry] Waiting 60s before retry...")
            say(f"\n[CI Retry] Attempt 2/2 for {rel}\n", 60)
        say("Ran 3 tests in 1.2s\n\nOK" if ran.passed else "FAILED (failures=1)", ran.elapsed)
        if ran.timed_out:
            say(f"\n✗ TIMEOUT: {WORKSPACE}/{ran.file} after 1800.0 seconds\n")
        say(f".\n.\nEnd ({number}/{len(files) - 1}):\nfilename='{rel}', elapsed={ran.elapsed}, "
            "estimated_time=600\n.\n.")  # fmt: skip
    for block in range(blocks):
        say("========== TIMINGS BEGIN ==========", 1)
        for n, ran in enumerate(files):
            entry = {"file": ran.file, "passed": ran.passed, "elapsed": ran.elapsed + block}
            say(json.dumps(entry))
            if malformed is not None and n == 0:
                say(malformed)
            if cut_in_block:
                out.append(f"{clock.stamp()} " + json.dumps(entry)[:15])
                return "\n".join(out)
        say("========== TIMINGS END ==========")
    say("Post job cleanup.", 2)
    say("Cleaning up orphan processes")
    return "\n".join(out) + "\n"
