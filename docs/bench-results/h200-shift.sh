#!/bin/sh
# The level-shift move on the H200 host (issue 15, item 1; issue 14's round), 2026-12-02:
# numpy's digest of the fixed update with the move (numpy 2.4.6 from .whl-np, as the
# golden digests are recorded), verify-gpu with its shift check, and `bench round` at the
# trial shape with the move on and off (one lease: the ratio compares like with like),
# and with 16 chains. Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
OUT=${OUT:?set OUT to the folder for the results}
LOGS=/tmp/h200-shift-logs
mkdir -p "$LOGS"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/np .whl-np/*.whl
PYTHONPATH=/tmp/np:$PYTHONPATH step digest 120 python3 -m service.cli bench digest --json
cp "$LOGS/digest.log" "$OUT/digest-h200-shift-2026-12-02.json"
step verify 240 python3 -m service.cli verify-gpu --out "$OUT/verify-h200-shift-2026-12-02.json"
tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
TRIAL="--accounts 5 --instruments 268 --window 256 --states 2 --backend wgpu --bars 12 --pace-s 3 --lead-s 25"
for run in "4 on" "4 off" "16 on"; do
  set -- $run
  step "round-chains$1-shift-$2" 120 python3 -m service.cli bench round $TRIAL --chains "$1" \
      --shift-moves "$2" --out "$OUT/round-h200-chains$1-shift-$2-2026-12-02.json"
  grep -E "warm round|cold round" "$LOGS/round-chains$1-shift-$2.log" >>"$OUT/summary.txt"
done
