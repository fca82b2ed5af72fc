"""`ci-budget conformance PATH`: run sglang's own CI scripts from a checkout and compare."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_leaf

# A user command, not only this project's proof: an sglang maintainer runs it on their own
# checkout to see that ci-budget decides as their CI scripts do before adopting it.
DESCRIPTION = (
    "For sglang maintainers, before adopting ci-budget: prove on your own checkout that it "
    "decides as your CI scripts do. Loads the checkout's python/sglang/test/ci/ci_register.py, "
    "scripts/ci/utils/compute_partitions.py and test/run_suite.py by file path (never "
    "`import sglang`; standard library and PyYAML only), runs them, and compares with what "
    "ci-budget decides zero config: every registration field by field, the run-ci dispatch per "
    "suite (shards, max_parallel, runner labels) and every shard's files in order. It runs the "
    "checkout's scripts in this process: use it on checkouts you trust. "
    "Exit status: 0 identical, 1 any difference, 2 (one line) a script is missing or fails, "
    "or the checkout's CI does what ci-budget does not model."
)


def _path(p) -> None:
    p.add_argument("_root", type=Path, nargs="?", metavar="PATH",
                   help="an sglang checkout (default: --root)")  # fmt: skip


def add_parser(sub) -> None:
    add_leaf(
        sub,
        "conformance",
        help="prove on an sglang checkout that ci-budget decides as its own CI scripts do",
        description=DESCRIPTION,
        example="ci-budget conformance ../sglang\n"
        "ci-budget conformance ../sglang --partition-model model.json\n"
        "ci-budget conformance ../sglang --runs",
        use_case=("ci_budget.app.conformance", "conformance", "ConformanceOptions"),
        extra=_path,
    )
