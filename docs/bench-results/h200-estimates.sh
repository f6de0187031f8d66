#!/bin/sh
# Issue 15 on the H200 host: the regime-change benchmark (its 16 CPU cores run the long
# references in parallel), the numpy digests on its Intel CPU, and verify-gpu after the
# step-size change. Set-up lines as in h200-model.sh, carrying .gl, .whl and .whl-np
# (numpy 2.4.6 for Python 3.12: this machine's numpy version, for the digests only).
set -u
OUT=${OUT:?set OUT to the folder for the results}
. "$(dirname "$0")/steps.sh"
lscpu >"$OUT/cpu.txt" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/np .whl-np/*.whl
# The digests: this tree (pair sums by numpy), the same with BLAS's batched matmul put
# back, each with numpy's default dispatch and with its AVX-512 targets disabled.
cp -r . /tmp/blas && python3 - <<'PY'
from pathlib import Path
p = Path("/tmp/blas/regime_model/hmm.py")
s = p.read_text()
new = "    pair_sums = (alpha[:, None, :, :-1] * weight[None]).sum(axis=-1).transpose(2, 0, 1)"
old = "    pair_sums = alpha[:, :, :-1].transpose(1, 0, 2) @ weight.transpose(1, 2, 0)"
assert new in s
p.write_text(s.replace(new, old))
PY
for tree in "$PWD" /tmp/blas; do
  name=$(basename "$tree")
  (cd "$tree" && PYTHONPATH=/tmp/np:$PYTHONPATH run "digest-$name" 60 python3 -m service.cli bench digest --json)
  (cd "$tree" && NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" PYTHONPATH=/tmp/np:$PYTHONPATH \
     run "digest-$name-no-avx512" 60 python3 -m service.cli bench digest --json)
done
run regime-change-sp500 420 python3 -m service.cli bench regime-change --csv tests/data/sp500.csv \
    --column Close --from 2008-08-01 --to 2008-10-31 --jobs 16 --reference-warmup 500 \
    --out "$OUT/regime-change-sp500-h200.json"
