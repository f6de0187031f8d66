#!/bin/sh
# The Monte Carlo gate and the extension block of more chains (issue 15, item 1; issue 14's
# round), on the H200 host, 2026-12-02 (eleventh session): numpy's digest of the fixed
# update (numpy 2.4.6 from .whl-np, as the golden digests are recorded), verify-gpu
# --quick, and `bench round` at the trial shape. Set-up as in h200-model.sh, carrying .gl,
# .whl and .whl-np.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-gate-logs
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/np .whl-np/*.whl
PYTHONPATH=/tmp/np:$PYTHONPATH step digest 60 python3 -m service.cli bench digest --json
cp "$LOGS/digest.log" "$OUT/digest-h200-gate-2026-12-02.json"
step verify 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200-gate-2026-12-02.json"
tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
step round 150 python3 -m service.cli bench round --accounts 5 --instruments 268 --chains 4 \
    --window 256 --states 2 --backend wgpu --bars 12 --pace-s 3 --lead-s 25 \
    --out "$OUT/round-h200-gate-2026-12-02.json"
grep -E "warm round|cold round" "$LOGS/round.log" >>"$OUT/summary.txt"
