#!/usr/bin/env bash
# Mutation test of the decision modules (budget status, spec validation, trigger decisions,
# sharding) against their own fast unit tests; fails when a module scores below the floor or a
# run-gating survivor appears. Configuration: [tool.mutmut] in pyproject.toml.
# Usage: scripts/mutation.sh [FLOOR_PERCENT]   (needs the `test` extra installed)
# MUTATION_TIME_LIMIT=SECONDS stops mutmut after that long: the partial table is printed, a
# loud notice says the score was not checked, and the exit status is 3 (not 0, not 1).
set -euo pipefail
cd "$(dirname "$0")/.."
floor="${1:-90}"
python="${PYTHON:-python}"
limit="${MUTATION_TIME_LIMIT:-0}"
cores="$(nproc)"
rm -rf mutants
run=("$python" -m mutmut run --max-children "$cores")
if [ "$limit" -gt 0 ]; then
    run=(timeout --kill-after=30 "$limit" "${run[@]}")
fi
echo "mutation: load average $(cut -d' ' -f1-3 /proc/loadavg) on $cores cores at the start"
status=0
TIMEFORMAT="mutation: mutmut ran %0R s wall, %0U s user + %0S s system CPU"
# mutmut redraws a progress line many times a second: keep its output out of the CI log.
time { "${run[@]}" >mutants.log 2>&1 || status=$?; }
echo "mutation: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
if [ "$limit" -gt 0 ] && { [ "$status" = 124 ] || [ "$status" = 137 ]; }; then
    "$python" scripts/mutation_score.py --partial --floor "$floor" || true
    echo "mutation: ******** TIMED OUT after $limit s: mutmut did not finish, so the score" \
        "was NOT checked (the table above covers the mutants checked by then) ********" >&2
    exit 3
fi
if [ "$status" != 0 ]; then
    tr "\r" "\n" <mutants.log | tail -n 40
    echo "mutation: mutmut run failed (exit $status)" >&2
    exit 1
fi
"$python" scripts/mutation_score.py --floor "$floor"
