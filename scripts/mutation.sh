#!/usr/bin/env bash
# Mutation test of the decision modules (budget status, spec validation, trigger decisions,
# sharding) against their own fast unit tests; fails when a module scores below the floor or a
# run-gating survivor appears. Configuration: [tool.mutmut] in pyproject.toml.
# Usage: scripts/mutation.sh [FLOOR_PERCENT]   (needs the `test` extra installed)
set -euo pipefail
cd "$(dirname "$0")/.."
floor="${1:-90}"
python="${PYTHON:-python}"
rm -rf mutants
start=$SECONDS
# mutmut redraws a progress line many times a second: keep its output out of the CI log.
if ! "$python" -m mutmut run --max-children "$(nproc)" >mutants.log 2>&1; then
    tail -n 40 mutants.log
    echo "mutation: mutmut run failed" >&2
    exit 1
fi
echo "mutation: mutmut ran in $((SECONDS - start)) s on $(nproc) cores"
"$python" scripts/mutation_score.py --floor "$floor"
