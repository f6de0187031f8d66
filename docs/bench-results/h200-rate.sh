#!/bin/sh
# The move's own acceptance as the two-readings signal, and extension blocks that read the
# account's ring (issue 14), on the H200 host, 2026-12-02 (twelfth session). Two device
# calls: `check` (numpy's digest of the fixed update with numpy 2.4.6 from .whl-np, as
# the golden digests are recorded; verify-gpu --quick) and `rounds` (`bench round` at the
# trial shape, wgpu then numpy in one call, so the warm rounds' ratio compares like with
# like; the wgpu round's settings are h200-gate.sh's). Set-up as in h200-model.sh,
# carrying .gl, .whl and .whl-np.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-rate-logs
TAG=rate-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
case ${1:?check or rounds} in
check)
    step digest 60 python3 -m service.cli bench digest --json
    cp "$LOGS/digest.log" "$OUT/digest-h200-$TAG.json"
    step verify 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200-$TAG.json"
    tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
    ;;
rounds)
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    step round-wgpu 150 python3 -m service.cli bench round $TRIAL --backend wgpu --bars 12 \
        --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-wgpu.log" >>"$OUT/summary.txt"
    # shellcheck disable=SC2086
    step round-numpy 330 python3 -m service.cli bench round $TRIAL --backend numpy --bars 4 \
        --pace-s 20 --lead-s 25 --out "$OUT/round-h200-numpy-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-numpy.log" >>"$OUT/summary.txt"
    tail -30 "$LOGS/round-numpy.log" >"$OUT/round-numpy-tail.log"
    ;;
esac
