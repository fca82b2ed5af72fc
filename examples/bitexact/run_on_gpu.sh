#!/usr/bin/env bash
# Run the bundled example on this machine's GPU with ci-budget's runner: once with the fixes in
# place, once with fix #34184 reverted (the guards must go red), then the budget reports and the
# guard table with this GPU's column filled from the reverted run.
#
#   examples/bitexact/run_on_gpu.sh [OUT_DIR]     (default: examples/bitexact/results)
#
# Needs ci-budget importable by $PYTHON (default python3) and torch with CUDA for the GPU path.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/results}" && cd "${1:-$here/results}" && pwd)
py=${PYTHON:-python3}
raw=$(mktemp -d)  # per-file pytest reports: useful locally, too many files to keep here
guard=test/registered/radix_cache/test_hybrid_cache_kl_bitexact.py
export BITEXACT_BACKEND=${BITEXACT_BACKEND:-torch}

cb() { "$py" -m ci_budget.cli "$@"; }
# Every file runs (the over-budget and failing ones are the point of the example); SANDBOX=on
# makes a runner without bubblewrap fail instead of running the tests unsandboxed. The config's
# 15 s per file is for the CPU demo; on a GPU, CUDA start-up alone takes several seconds.
run() {
    cb run --root "$here" --python "$py" --continue-on-error --sandbox "${SANDBOX:-auto}" \
        --timeout-per-file "${TIMEOUT_PER_FILE:-300}" "$@"
}

nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader || true

run --suite base-b-test-1-gpu-large --suite base-a-test-1-gpu-large \
    --out "$out/fixed.json" --artifacts-dir "$raw/fixed"
echo "fixed run exit status: $? (0: every guard passed)"

BITEXACT_REINTRODUCE_BUG=34184 run --suite base-b-test-1-gpu-large \
    --out "$out/reverted-34184.json" --artifacts-dir "$raw/reverted"
echo "reverted run exit status: $? (1: the guards that cover #34184 went red)"

cb report --root "$here" --results "$out/fixed.json" --out "$out/report-fixed.md" \
    --format text
cb report --root "$here" --results "$out/reverted-34184.json" \
    --out "$out/report-reverted-34184.md" --format text
cb guard fill "$guard" --root "$here" --fill-from "$out/reverted-34184.json" --reverted \
    >"$out/table-filled-sm90.txt"
cat "$out/table-filled-sm90.txt"
rm -rf "$raw"
