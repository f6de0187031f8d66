#!/bin/sh
# The fit's split sampler and the scan's shared pair products on the H200 host (issue 15,
# items 3 and 6), 2026-12-02: the golden digests with numpy 2.4.6 (from .whl-np, as they
# are recorded), verify-gpu (the device against the numpy reference, whose scan changed),
# and `fit` of S&P 500's 5,030 returns on the host's CPU, three times. Set-up as in
# h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
OUT=${OUT:?set OUT to the folder for the results}
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/np .whl-np/*.whl
NP="/tmp/np:$PYTHONPATH"
PYTHONPATH=$NP python3 -m service.cli bench digest --json >"$OUT/digest-h200-2026-12-02.json"
timeout 300 python3 -m service.cli verify-gpu --out "$OUT/verify-h200-scan-2026-12-02.json" \
  >"$OUT/verify.log" 2>&1
echo "verify-gpu: rc $?" >>"$OUT/summary.txt"
for i in 1 2 3; do
  start=$(date +%s.%N)
  PYTHONPATH=$NP python3 -m service.cli fit --csv tests/data/sp500.csv --column Close --json \
    >"/tmp/fit-$i.json"
  end=$(date +%s.%N)
  python3 -c "import json,sys; d=json.load(open('/tmp/fit-$i.json'))['diagnostics']; \
print('fit $i: wall', round($end - $start, 2), 's; seconds', d['seconds'], d['samplers_tried'], \
d['gradient_evals'])" >>"$OUT/summary.txt"
done
