#!/bin/sh
# Wide starts (regime_model/width.py): an instrument that ran on starts its next update
# with its block's chains, beside the account's first batch in one device run (issue 14),
# on the H200 host, 2026-12-02 (twelfth session), one call: numpy's digest of the fixed
# update (numpy 2.4.6 from .whl-np, as the golden digests are recorded), verify-gpu
# --quick, and `bench round` at the trial shape, wgpu then numpy (h200-rate-2.sh's
# settings). Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-wide-logs
TAG=wide-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
PYTHONPATH=/tmp/np:$PYTHONPATH step digest 60 python3 -m service.cli bench digest --json
cp "$LOGS/digest.log" "$OUT/digest-h200-$TAG.json"
PYTHONPATH=/tmp/np:$PYTHONPATH step verify 120 python3 -m service.cli verify-gpu --quick \
    --out "$OUT/verify-h200-$TAG.json"
tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
# shellcheck disable=SC2086 # TRIAL is a list of flags
PYTHONPATH=/tmp/np:$PYTHONPATH step round-wgpu 120 python3 -m service.cli bench round $TRIAL \
    --backend wgpu --bars 12 --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$TAG.json"
grep -E "warm round|cold round" "$LOGS/round-wgpu.log" >>"$OUT/summary.txt"
# shellcheck disable=SC2086
PYTHONPATH=/tmp/np:$PYTHONPATH step round-numpy 280 python3 -m service.cli bench round $TRIAL \
    --backend numpy --bars 5 --pace-s 40 --lead-s 25 --out "$OUT/round-h200-numpy-$TAG.json"
grep -E "warm round|cold round" "$LOGS/round-numpy.log" >>"$OUT/summary.txt"
