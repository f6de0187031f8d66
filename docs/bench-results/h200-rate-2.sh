#!/bin/sh
# The afternoon's H200 calls (issue 14), 2026-12-02 (twelfth session), after the host
# driver's y stopped going up twice per iteration and the level-shift move's density call
# rode in the trajectory's submission (cold lanes). `model`: verify-gpu --quick (its
# cold comparison runs the fused path), `bench model --shape trial` (the
# worst instrument's ESS per second, against NumPyro's 0.27 on this GPU) and
# idle_clocks.py (its own first run on the H200: back to back, then after 3 s pauses with
# 0, 50 and 200 ms of a busy kernel first). `rounds`: `bench round` at the trial shape,
# wgpu then numpy in one call, numpy at a 40 s pace (its warm update took 22-28 s in
# h200-rate.sh's call, longer than that call's 20 s pace). Set-up as in h200-model.sh,
# carrying .gl, .whl and .whl-np.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-rate-2-logs
TAG=rate-2-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
case ${1:?model or rounds} in
model)
    step verify 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200-$TAG.json"
    tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
    step model 150 python3 -m service.cli bench model --shape trial --backend wgpu \
        --out "$OUT/model-trial-h200-wgpu-$TAG.json"
    step idle-0 60 python3 docs/bench-results/idle_clocks.py 0 0
    cp "$LOGS/idle-0.log" "$OUT/idle-clocks-0s-h200-$TAG.log"
    step idle-3 90 python3 docs/bench-results/idle_clocks.py 3 0,50,200
    cp "$LOGS/idle-3.log" "$OUT/idle-clocks-3s-h200-$TAG.log"
    ;;
rounds)
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    step round-wgpu 150 python3 -m service.cli bench round $TRIAL --backend wgpu --bars 12 \
        --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-wgpu.log" >>"$OUT/summary.txt"
    # shellcheck disable=SC2086
    step round-numpy 330 python3 -m service.cli bench round $TRIAL --backend numpy --bars 5 \
        --pace-s 40 --lead-s 25 --out "$OUT/round-h200-numpy-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-numpy.log" >>"$OUT/summary.txt"
    ;;
esac
