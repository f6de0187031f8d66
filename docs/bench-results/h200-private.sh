#!/bin/sh
# The one-dispatch sampler's lane state in private memory (issue 14), H200, 2026-12-02
# (thirteenth session), one call: verify-gpu --quick; lanes_latency.py at 54:4 and 19:32
# with the commit before (35a57ba, carried as scratch/trees/prev, a `git archive` of the
# packages) and HEAD, alternated twice, 32 threads per lane; `bench model --shape trial`;
# `bench round` at the trial shape, wgpu then numpy (the ratio). Set-up as in
# h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-private-logs
TAG=private-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
lanes() {  # lanes TREE NAME: one kernel's lines, tagged, into lanes-latency-*.jsonl
    PYTHONPATH=$1:$PYTHONPATH step "lanes-$2" 90 python3 docs/bench-results/lanes_latency.py \
        --lane-threads 32 54:4 19:32
    grep '^{' "$LOGS/lanes-$2.log" | sed "s/^{/{\"kernel\": \"$2\", /" \
        >>"$OUT/lanes-latency-h200-$TAG.jsonl"
}
step verify 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200-$TAG.json"
tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
lanes scratch/trees/prev prev-1
lanes . head-1
lanes scratch/trees/prev prev-2
lanes . head-2
step model 150 python3 -m service.cli bench model --shape trial --backend wgpu \
    --out "$OUT/model-trial-h200-wgpu-$TAG.json"
# shellcheck disable=SC2086 # TRIAL is a list of flags
step round-wgpu 120 python3 -m service.cli bench round $TRIAL --backend wgpu --bars 12 \
    --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$TAG.json"
grep -E "warm round|cold round" "$LOGS/round-wgpu.log" >>"$OUT/summary.txt"
# shellcheck disable=SC2086
step round-numpy 280 python3 -m service.cli bench round $TRIAL --backend numpy --bars 5 \
    --pace-s 40 --lead-s 25 --out "$OUT/round-h200-numpy-$TAG.json"
grep -E "warm round|cold round" "$LOGS/round-numpy.log" >>"$OUT/summary.txt"
