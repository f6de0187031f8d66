#!/bin/sh
# Issue 14, the one-submission warm update: model benchmarks and verify-gpu on the H200.
# The lead runs it with the `device` tool (carry .gl and .whl; see
# ../shared/device/README.md), after the set-up lines:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; \
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#     --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit; \
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp; \
#   sh docs/bench-results/h200-model.sh
# Writes JSON under $OUT; at most 9.3 minutes (each step has its own timeout; numpy at
# the trial shape takes about 3 minutes, cold then warm).
set -u
OUT=${OUT:?set OUT to the folder for the results}
. "$(dirname "$0")/steps.sh"
nvidia-smi -L >"$OUT/gpu.txt" 2>&1
# The trial shape (268 instruments x 4 chains, T 256, K 2): cold then warm, wgpu and numpy.
run bench-wgpu 90 python3 -m service.cli bench model --shape trial --backend wgpu \
    --out "$OUT/model-trial-wgpu.json"
run bench-numpy 200 python3 -m service.cli bench model --shape trial --backend numpy \
    --out "$OUT/model-trial-numpy.json"
# Per account update, 2 accounts: the one-submission warm update against the host driver
# (one submission per trajectory), with submissions counted and GPU time from timestamps.
run model-accounts 120 python3 -m gpu_backend.bench.model --out "$OUT/trial-h200-one-submission.json" \
    --accounts 2 --numpy-accounts 0 --warm-updates 3 --host-driver
# The identity gate, the warm update's chain-by-chain agreement included.
run verify-gpu 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200.json"
