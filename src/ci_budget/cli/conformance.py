"""`ci-budget conformance PATH`: run sglang's own CI scripts from a checkout and compare."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_common, add_partition_model, add_subcommand


def add_parser(sub):
    p = add_subcommand(
        sub,
        "conformance",
        help="compare ci-budget with an sglang checkout's own CI scripts",
        description="Load the checkout's python/sglang/test/ci/ci_register.py, "
        "scripts/ci/utils/compute_partitions.py and test/run_suite.py by file path (never "
        "`import sglang`; standard library and PyYAML only), run them, and compare with what "
        "ci-budget decides zero config: every registration field by field, the run-ci dispatch "
        "per suite (shards, max_parallel, runner labels) and every shard's files in order. "
        "It runs the checkout's scripts in this process: use it on checkouts you trust. "
        "Exit status: 0 identical, 1 any difference, 2 (one line) a script is missing or "
        "fails, or the checkout's CI does what ci-budget does not model.",
        example="ci-budget conformance ../sglang\n"
        "ci-budget conformance ../sglang --partition-model model.json",
    )
    p.add_argument(
        "path", type=Path, nargs="?", metavar="PATH", help="an sglang checkout (default: --root)"
    )
    add_common(p)
    add_partition_model(p)
    p.add_argument("--max-differences", type=int, default=40, metavar="N",
                   help="differences listed after the table (default 40)")  # fmt: skip
    return p


def run(args) -> int:
    from ci_budget.app.conformance import ConformanceOptions, conformance
    from ci_budget.cli.common import settings

    if args.path is not None:
        args.root = args.path
    options = ConformanceOptions(args.partition_model, args.max_differences)
    return conformance(settings(args), options)
