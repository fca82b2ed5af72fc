#!/usr/bin/env bash
# Mutation test of the decision modules (budget status, spec validation, trigger decisions,
# sharding) against their own fast unit tests. Configuration: [tool.mutmut] in pyproject.toml;
# the gating functions: GATES in scripts/mutation_score.py. Needs the `test` extra installed.
#
# Usage: scripts/mutation.sh gate            the mutants of the functions that gate a GPU run or
#                                            accept a spec; fails on any survivor there (.ci/run)
#        scripts/mutation.sh full [FLOOR]    every mutant of the selection; fails on a gating
#                                            survivor or a module below FLOOR % (default 90)
#
# Neither has a time limit: a verdict depends on the code and the tests alone, never on how busy
# the machine is (a run cut short would have no verdict, and one that passed then checked nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-full}"
floor="${2:-90}"
python="${PYTHON:-python}"
case "$mode" in
    gate | full) ;;
    *)
        echo "usage: scripts/mutation.sh gate | full [FLOOR]" >&2
        exit 2
        ;;
esac
# The same hash seed every run: set and dict orders, and so the tests' order, never differ.
export PYTHONHASHSEED=0
rm -rf mutants
run=("$python" -m mutmut run --max-children "$(nproc)")
score=("$python" scripts/mutation_score.py --floor "$floor")
if [ "$mode" = gate ]; then
    listed="$("$python" scripts/mutation_score.py --patterns)"
    mapfile -t patterns <<<"$listed"
    run+=("${patterns[@]}")
    score+=(--gates)
fi
echo "mutation ($mode): load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores at the start"
status=0
TIMEFORMAT="mutation ($mode): mutmut ran %0R s wall, %0U s user + %0S s system CPU"
# mutmut redraws a progress line many times a second: keep its output out of the CI log.
time { "${run[@]}" >mutants.log 2>&1 || status=$?; }
echo "mutation ($mode): load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
if [ "$status" != 0 ]; then
    tr "\r" "\n" <mutants.log | tail -n 40
    echo "mutation ($mode): mutmut run failed (exit $status)" >&2
    exit 1
fi
"${score[@]}"
