"""`ci-budget run`: run registered test files with per-file timeouts and record timings."""

from __future__ import annotations

from ci_budget.cli.common import add_leaf


def add_parser(sub) -> None:
    add_leaf(
        sub,
        "run",
        help="run registered test files and record per-file and per-class timings",
        description="Run the files of one or more suites (or explicit specs), each in its own "
        "process with a timeout, and write a results JSON after every file. Prints progress "
        "lines and, at the end, sglang's TIMINGS block. Stops at the first file that does not "
        "pass, as sglang's per-commit runs do (--continue-on-error runs the rest). A drop-in "
        "for sglang's `run_suite.py`: its flags (--hw, --auto-partition-id/-size, "
        "--partition-model-file, --timeout-from-est-time, --enable-retry ...) mean what they "
        "mean there, and with --hw the files run as `python3 FILE -f` from test/; --from-log "
        "reads the output of a run_suite.py run instead of running. "
        "Exit status: 0 every file passed, 1 a file failed, timed out or crashed, 2 usage error.",
        example="ci-budget run --suite base-b-test-1-gpu-large --partition 0/2 "
        "--out results/shard0.json\n"
        "ci-budget run test/registered/test_srt.py::TestSRT.test_decode --timeout-per-file 600\n"
        "ci-budget run --suite base-b-test-1-gpu-large --partition 3/12 --dry-run --format json\n"
        "cd test && ci-budget run --hw cuda --suite base-b-test-1-gpu-large "
        "--auto-partition-id 3 --auto-partition-size 12 --partition-model-file model.json",
        use_case=("ci_budget.app.run", "run", "RunOptions"),
    )
