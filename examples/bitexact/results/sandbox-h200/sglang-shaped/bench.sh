#!/usr/bin/env bash
# The sandbox's cost on an sglang-shaped test (test/registered/test_server_shaped.py): PAIRS
# alternating pairs of `ci-budget run --sandbox off` and `--sandbox on` (off/on, then on/off),
# same machine, same call. Run from the ci-budget checkout as root on a GPU machine with torch:
#   bash examples/bitexact/results/sandbox-h200/sglang-shaped/bench.sh OUTDIR
# Needs bwrap, and ci-budget's run dependencies importable (PYTHONPATH).
set -euo pipefail
out=${1:?OUTDIR}
pairs=${PAIRS:-5}
here=$(cd "$(dirname "$0")" && pwd)
model=$HOME/.cache/huggingface/hub/bench-model.bin
mkdir -p "$(dirname "$model")" "$out"
[[ -f $model ]] || python3 -c "import sys, torch
t = torch.randn(4 * 8192 * 8192).div_(64).to(torch.bfloat16)
t.view(torch.int16).numpy().tofile(sys.argv[1])" "$model"
repo=$(mktemp -d)
cp -r "$here/test" "$here/pytest.ini" "$repo/"
git init -q "$repo"
run() { # mode index
  python3 -m ci_budget.cli run --root "$repo" --suite base-b-test-1-gpu-large --python python3 \
    --sandbox "$1" --out "$out/r-$1-$2.json" --artifacts-dir "$out/art-$1-$2" --timeout-per-file 900
}
for i in $(seq 1 "$pairs"); do
  if ((i % 2)); then order="off on"; else order="on off"; fi
  for mode in $order; do
    echo "== pair $i: sandbox $mode (load $(cut -d' ' -f1 /proc/loadavg))"
    run "$mode" "$i"
  done
done
python3 - "$out" "$pairs" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
got = {m: [json.load(open(f"{out}/r-{m}-{i}.json"))["files"][0] for i in range(1, pairs + 1)]
       for m in ("off", "on")}
for m, files in got.items():
    assert all(f["status"] == "passed" for f in files), (m, [f["status"] for f in files])
secs = {m: [f["elapsed"] for f in files] for m, files in got.items()}
diffs = [b - a for a, b in zip(secs["off"], secs["on"])]
summary = {
    "off_s": secs["off"], "on_s": secs["on"], "pair_diff_s": diffs,
    "mean_off_s": statistics.mean(secs["off"]), "mean_on_s": statistics.mean(secs["on"]),
    "mean_pair_diff_pct": 100 * statistics.mean(diffs) / statistics.mean(secs["off"]),
}
print(json.dumps(summary, indent=1))
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
PY
