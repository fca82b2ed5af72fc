#!/usr/bin/env bash
# issue 31 item 7 on the GPU: install deps, sandbox_check + probe, then bench.sh
set -u
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/gpu.log") 2>&1
echo "== versions ($(date -u +%FT%TZ))"
uname -a; id; command -v python3; python3 --version; grep PRETTY /etc/os-release; nproc
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
echo "load $(cat /proc/loadavg)"; echo "HOME=$HOME"; df -T / /tmp "$HOME" | tail -n +2
ldconfig -p | grep -q 'libcap.so.2 ' || { echo "libcap2 missing: unpacking"; dpkg -x .deb/libcap2_*.deb /; ldconfig; }
[ -x /usr/bin/bwrap ] || dpkg -x .deb/bubblewrap_*.deb /
/usr/bin/bwrap --version; command -v setpriv
python3 -c 'import torch; print("torch", torch.__version__)'
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD/src
if [ -z "${SKIP_CHECK:-}" ]; then
echo "== sandbox_check (torch inside the sandbox)"
python3 scripts/sandbox_check.py; echo "rc=$?"
echo "== probe inside the sandbox, credentials planted in the job's environment and in \$HOME"
mkdir -p ~/.ssh ~/.docker
echo probe-secret-ssh > ~/.ssh/id_rsa; echo '{"auths":{"x":{"auth":"probe-secret-docker"}}}' > ~/.docker/config.json
GITHUB_TOKEN=probe-secret-tok GH_TOKEN=probe-secret-gh ACTIONS_RUNTIME_TOKEN=probe-secret-rt HF_TOKEN=hf-kept \
python3 scripts/sandbox_check.py -- sh -c '
id; echo "HOME=$HOME HF_TOKEN=${HF_TOKEN:-absent}"
echo "secrets in env: $(env | grep -c probe-secret)"
echo "secrets in any /proc/*/environ: $(cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep -c probe-secret)"
echo "secrets in ~/.ssh/id_rsa ~/.docker/config.json: $(cat ~/.ssh/id_rsa ~/.docker/config.json 2>/dev/null | grep -c probe-secret)"
echo "processes in /proc: $(ls /proc | grep -c "^[0-9]")"; grep -E "^Cap(Eff|Bnd)|NoNewPrivs" /proc/self/status
ls -A src 2>&1 | head -2; touch /opt/x 2>&1 | head -1; ls ~/.cache/huggingface/hub 2>&1 | head -3
nvidia-smi -L'
echo "rc=$?"
rm -rf ~/.ssh ~/.docker
fi
if [ -n "${WARMUP:-}" ]; then echo "== warm-up run (discarded)"; PAIRS=1 bash examples/bitexact/results/sandbox-h200/sglang-shaped/bench.sh /tmp/warm 2>&1 | grep -E "PASSED|FAILED|pair"; rm -rf /tmp/warm; fi
echo "== bench ($(date -u +%FT%TZ), load $(cat /proc/loadavg))"
PAIRS=${PAIRS:-6} bash examples/bitexact/results/sandbox-h200/sglang-shaped/bench.sh /tmp/bench; echo "bench rc=$?"
echo "== end ($(date -u +%FT%TZ), load $(cat /proc/loadavg))"
cp /tmp/bench/summary.json "$OUT/" 2>/dev/null
(cd /tmp/bench && python3 -c "
import json,glob
for f in sorted(glob.glob('r-*.json')):
    d=json.load(open(f)); x=d['files'][0]; print(f, x['status'], round(x['elapsed'],2))
") | tee "$OUT/per-run.txt"
tar czf "$OUT/results.tgz" -C /tmp/bench $(cd /tmp/bench && ls r-*.json) 2>/dev/null
ls /tmp/bench
exec 1>&- 2>&-
sleep 1
