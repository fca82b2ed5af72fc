"""`python -m benchmarks [--smoke] [--only NAME ...]`: every benchmark, one table.

Each benchmark measures its baseline and ci-budget in the same run and prints the ratio, so the
numbers compare on whatever machine runs them. `--smoke` runs tiny sizes (used by the tests).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
from pathlib import Path

from benchmarks.common import table

# name -> (module, full-size kwargs, smoke kwargs)
BENCHMARKS = {
    "registry": ("benchmarks.registry_bench", {}, {"files": 40, "repeat": 1}),
    "ingest": (
        "benchmarks.ingest_bench",
        {},
        {"tests": 300, "files": 12, "shards": 3, "shard_files": 4, "repeat": 1},
    ),
    "startup": ("benchmarks.startup_bench", {}, {"repeat": 1}),
    "github": ("benchmarks.github_bench", {}, {"chatter": (0, 150)}),
    "runner": ("benchmarks.runner_bench", {}, {"files": 2}),
    "install": (
        "benchmarks.install_bench",
        {},
        {"repeat": 1, "baseline": False},
    ),
    "sglang": ("benchmarks.sglang_bench", {}, {"repeat": 1}),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to check they still run")
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHMARKS), help="run only these")
    parser.add_argument(
        "--sglang",
        type=Path,
        default=None,
        metavar="PATH",
        help="a git checkout of sglang: adds its collect_tests and a real PR's static report",
    )
    args = parser.parse_args(argv)
    print(
        f"# ci-budget benchmarks on {platform.node()}: {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {sys.platform}"
    )
    rows = []
    for name in args.only or BENCHMARKS:
        module_name, full, smoke = BENCHMARKS[name]
        module = importlib.import_module(module_name)
        print(f"running {name} ...", file=sys.stderr, flush=True)
        kwargs = dict(smoke if args.smoke else full)
        if name == "sglang":
            kwargs["checkout"] = args.sglang
        rows.extend(module.run(**kwargs))
    sys.stdout.write(table(rows))
    return 1 if any(r.verdict == "WRONG" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
