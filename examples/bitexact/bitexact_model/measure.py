"""Print the measured-KL table rows for this machine's backend.

    python -m bitexact_model.measure            # from examples/bitexact
    BITEXACT_BACKEND=torch python -m bitexact_model.measure

Runs every table case with each fix reverted in turn and with both fixes in place.
"""

from __future__ import annotations

import argparse

from bitexact_model.backend import get_backend
from bitexact_model.cache import SLOT_BY_DEPTH, STALE_CHECKPOINT
from bitexact_model.cases import TABLE_CASES, run_case
from bitexact_model.model import TinyHybridModel

ROWS = [(STALE_CHECKPOINT, label) for label in TABLE_CASES] + [
    (SLOT_BY_DEPTH, "multiturn branching")
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["numpy", "torch"], default=None)
    args = parser.parse_args(argv)
    model = TinyHybridModel(backend=get_backend(args.backend))
    print(f"backend: {model.backend.describe()}")
    print(f"{'fix':8} {'case':30} {'fix reverted':>14} {'fix in place':>14}")
    for bug, label in ROWS:
        reverted = run_case(label, model, frozenset({bug})).kl
        fixed = run_case(label, model, frozenset()).kl
        print(f"#{bug:7} {label:30} {reverted:>14.3g} {fixed:>14.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
