#!/bin/sh
# Issue 15 on the H200 host, second call: verify-gpu after the step-size change, and the
# regime-change benchmark on a synthetic series with known switch points and on NASDAQ.
set -u
OUT=${OUT:?set OUT to the folder for the results}
. "$(dirname "$0")/steps.sh"
run verify-gpu 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200.json"
run synthetic 30 python3 -m service.cli bench regime-change --write-synthetic /tmp/synthetic.csv --seed 3
cp /tmp/synthetic.csv "$OUT/synthetic-seed3.csv"
run regime-change-synthetic 300 python3 -m service.cli bench regime-change --csv /tmp/synthetic.csv \
    --from 2011-02-01 --to 2011-04-01 --jobs 16 --reference-warmup 500 \
    --out "$OUT/regime-change-synthetic-h200.json"
