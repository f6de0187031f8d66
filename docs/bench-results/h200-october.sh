#!/bin/sh
# Issue 15 on the H200 host, 2026-12-02: strong references (16 chains x 10,000 draws) for
# October 2008, the month August's and September's runs left out (the whole three months
# at this size do not fit one device call), and what 4x the chains costs the real daemon
# on the GPU (`bench round` at 4 and at 16 chains per instrument, one lease, so the ratio
# compares like with like). Set-up as in h200-model.sh, carrying .gl and .whl.
set -u
OUT=${OUT:?set OUT to the folder for the results}
. "$(dirname "$0")/steps.sh"
run regime-change-oct 300 env OMP_NUM_THREADS=1 python3 -m service.cli bench regime-change \
    --csv tests/data/sp500.csv --column Close --from 2008-10-01 --to 2008-10-31 --seed 7 \
    --jobs 16 --reference-chains 16 --reference-draws 10000 --reference-warmup 1000 \
    --out "$OUT/regime-change-sp500-oct-refs16x10000-h200-2026-12-02.json"
for chains in 4 16; do
  run "round-chains$chains" 130 timeout -s INT -k 20 120 python3 -m service.cli bench round \
      --accounts 5 --instruments 268 --chains "$chains" --window 256 --states 2 \
      --backend wgpu --bars 12 --pace-s 3 --lead-s 25 \
      --out "$OUT/round-h200-chains$chains-2026-12-02.json"
done
