"""`ci-budget conformance PATH`: run sglang's own CI scripts from a checkout and compare."""

from __future__ import annotations

from pathlib import Path

from ci_budget.cli.common import add_partition_model, add_subcommand


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
        "Exit status: 0 identical, 1 any difference, 2 a script is missing or fails.",
        example="ci-budget conformance ../sglang\n"
        "ci-budget conformance ../sglang --partition-model model.json",
    )
    p.add_argument("path", type=Path, metavar="PATH", help="an sglang checkout")
    add_partition_model(p)
    p.add_argument("--max-differences", type=int, default=40, metavar="N",
                   help="differences listed after the table (default 40)")  # fmt: skip
    return p


def run(args) -> int:
    import json

    from ci_budget.cli.common import CliError, load, load_partition_model
    from ci_budget.conformance.compare import compare, table
    from ci_budget.conformance.ours import our_view
    from ci_budget.conformance.reference import ReferenceError, reference_view

    args.root, args.config = args.path, None
    root, config = load(args)
    model = load_partition_model(args.partition_model)
    raw = None
    if model is not None:
        raw = json.loads(args.partition_model.read_text(encoding="utf-8"))
    try:
        ref = reference_view(root, raw)
    except ReferenceError as exc:
        raise CliError(str(exc)) from None
    ours = our_view(root, config, model)
    result = compare(ref, ours)
    print(table(result.rows))
    for line in result.differences[: args.max_differences]:
        print(f"DIFF {line}")
    left = len(result.differences) - args.max_differences
    if left > 0:
        print(f"... and {left} more differences")
    print("identical" if result.identical else f"{len(result.differences)} differences")
    return 0 if result.identical else 1
