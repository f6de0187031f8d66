#!/bin/sh
# What 64 chains with the level-shift move cost the real daemon on the H200 (issue 15,
# item 1: the setting that came within 0.001 of the maximum error on S&P 500 in
# 2008), beside the default 4 chains in the same lease. Set-up as in h200-model.sh,
# carrying .gl and .whl.
set -u
OUT=${OUT:?set OUT to the folder for the results}
TRIAL="--accounts 5 --instruments 268 --window 256 --states 2 --backend wgpu --bars 10"
for chains in 64 4; do
  start=$(date +%s)
  timeout -s INT -k 20 170 python3 -m service.cli bench round $TRIAL --chains "$chains" \
      --pace-s 6 --lead-s 40 --out "$OUT/round-h200-chains$chains-shift-on-late-2026-12-02.json" \
      >"/tmp/round-$chains.log" 2>&1
  echo "chains $chains: rc $? in $(( $(date +%s) - start )) s" >>"$OUT/summary.txt"
  grep -E "warm round|cold round|model  |submissions" "/tmp/round-$chains.log" >>"$OUT/summary.txt"
done
