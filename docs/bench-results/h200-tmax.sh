#!/bin/sh
# Workgroup memory and private arrays sized to the longest window (TMAX 1024) or to the
# trial's (256), issue 14, H200, 2026-12-02 (fourteenth session): an experiment on a copy
# of HEAD's packages (scratch/trees/exp) whose hmm_scan.TMAX reads RT_SCAN_TMAX.
# lanes_latency.py at 800 to 2,112 lanes, the two sizes alternated twice, each in its own
# process; then `bench round` at the trial shape on wgpu with each size.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees/exp.
set -u
OUT=${OUT:?set OUT to the folder for the results}
OUT=$(cd "$OUT" && pwd)
LOGS=/tmp/h200-tmax-logs
TAG=tmax-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
cd scratch/trees/exp || exit 1
export PYTHONPATH=$(pwd):$PYTHONPATH
for tmax in 1024 256 1024 256; do
    RT_SCAN_TMAX=$tmax step "lanes-$tmax" 120 python3 docs/bench-results/lanes_latency.py \
        54:4 19:32 200:4 264:4 528:4
    grep '^{' "$LOGS/lanes-$tmax.log" | sed "s/^{/{\"tmax\": $tmax, /" \
        >>"$OUT/lanes-latency-h200-$TAG.jsonl"
done
for tmax in 256 1024; do
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    RT_SCAN_TMAX=$tmax step "round-$tmax" 150 python3 -m service.cli bench round $TRIAL \
        --backend wgpu --bars 12 --pace-s 3 --lead-s 25 \
        --out "$OUT/round-h200-wgpu-tmax$tmax-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-$tmax.log" | sed "s/^/tmax $tmax: /" \
        >>"$OUT/summary.txt"
done
