#!/usr/bin/env bash
# docs/performance.md, "The diff job's checkout": bytes and seconds of a full clone against the
# diff recipe's depth-1 head + blobless depth-1 base, from a local mirror over file://.
# Usage: benchmarks/checkout_depth.sh MIRROR HEAD_SHA [CI_BUDGET]  (the base is HEAD_SHA^)
set -euo pipefail
mirror=$(realpath "$1")
head=$(git --git-dir="$mirror" rev-parse "$2^{commit}")
base=$(git --git-dir="$mirror" rev-parse "$2^")
cli=${3:-ci-budget}
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
upload="git -c uploadpack.allowFilter=true upload-pack" # GitHub allows filters; a mirror may not
timed() { local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; echo "$(bc <<<"$EPOCHREALTIME - $t0")s"; }
bytes() { du -sb "$1/.git" | cut -f1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $(git --version)"
echo "full clone: $(timed git clone -q --no-checkout "file://$mirror" "$work/full") $(bytes "$work/full") bytes"
git init -q "$work/d1"
git -C "$work/d1" remote add origin "file://$mirror"
echo "head at depth 1: $(timed git -C "$work/d1" fetch -q --no-tags --depth=1 origin "$head") $(bytes "$work/d1") bytes"
cp -a "$work/d1" "$work/plain"
echo "+ base at depth 1: $(timed git -C "$work/plain" fetch -q --no-tags --depth=1 origin "$base") $(bytes "$work/plain") bytes"
echo "+ base at depth 1, blobless: $(timed git -C "$work/d1" fetch -q --no-tags --depth=1 --filter=blob:none --upload-pack="$upload" origin "$base") $(bytes "$work/d1") bytes"
git -C "$work/d1" checkout -q "$head"
git -C "$work/full" checkout -q "$head"
for tree in d1 full; do
  echo "diff in $tree: $(cd "$work/$tree" && timed "$cli" diff --base "$base" --format json --out "$work/$tree.md") $(bytes "$work/$tree") bytes"
done
cmp -s "$work/d1.json" "$work/full.json" && echo "the two reports are identical" || echo "the two reports DIFFER"
