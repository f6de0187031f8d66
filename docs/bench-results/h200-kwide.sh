#!/bin/sh
# K-wide scan kernels (issue 14), H200, 2026-12-02 (thirteenth session). `kernels`:
# verify-gpu --quick, then lanes_latency.py at one account's first batch (54:4), a whole
# batch of 268 (268:4) and a wide group (19:32), each kernel in its own process, in turn:
# the session's start (749f637, padded vec4 / mat4x4), K-wide vectors only (0b6f677), and
# HEAD (also the chunk's messages in a private array) at 64, 128 and 32 threads per lane;
# the two older trees are carried as scratch/trees/{old,kw} (`git archive` of the
# packages); then `bench round` at the trial shape on wgpu. `rounds` (the default now 32
# threads per lane): lanes at 32 then 64, `bench model --shape trial`, and `bench round`
# wgpu then numpy in one call (the ratio).
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-kwide-logs
TAG=kwide-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
SHAPES="54:4 268:4 19:32"
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
lanes() {  # lanes TREE LT: one kernel's lines, tagged, into lanes-latency-*.jsonl
    # shellcheck disable=SC2086 # SHAPES is a list
    PYTHONPATH=$1:$PYTHONPATH step "lanes-$2" 120 python3 docs/bench-results/lanes_latency.py \
        --lane-threads "$3" $SHAPES
    grep '^{' "$LOGS/lanes-$2.log" | sed "s/^{/{\"kernel\": \"$2\", /" \
        >>"$OUT/lanes-latency-h200-$TAG.jsonl"
}
case ${1:?kernels or rounds} in
kernels)
    step verify 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200-$TAG.json"
    tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
    lanes scratch/trees/old old-64 64
    lanes . head-64 64
    lanes scratch/trees/kw kw-64 64
    lanes . head-128 128
    lanes . head-32 32
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    step round-wgpu 120 python3 -m service.cli bench round $TRIAL --backend wgpu --bars 12 \
        --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-wgpu.log" >>"$OUT/summary.txt"
    ;;
rounds)  # after LANE_THREADS 64 -> 32: the two again, in the other order
    lanes . head-32-2 32
    lanes . head-64-2 64
    step model 150 python3 -m service.cli bench model --shape trial --backend wgpu \
        --out "$OUT/model-trial-h200-wgpu-$TAG.json"
    # shellcheck disable=SC2086
    step round-wgpu 120 python3 -m service.cli bench round $TRIAL --backend wgpu --bars 12 \
        --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$TAG-2.json"
    grep -E "warm round|cold round" "$LOGS/round-wgpu.log" >>"$OUT/summary.txt"
    # shellcheck disable=SC2086
    step round-numpy 280 python3 -m service.cli bench round $TRIAL --backend numpy --bars 5 \
        --pace-s 40 --lead-s 25 --out "$OUT/round-h200-numpy-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-numpy.log" >>"$OUT/summary.txt"
    ;;
esac
