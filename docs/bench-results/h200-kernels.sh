#!/bin/sh
# Issue 14, the kernel: threads per lane (0 = one thread per lane, else a workgroup per lane
# and the one-dispatch warm update), the identity gate and the trial-shape model benchmark
# on the H200. Run with the `device` tool after the set-up lines of h200-model.sh.
set -u
OUT=${OUT:?set OUT to the folder for the results}
. "$(dirname "$0")/steps.sh"
nvidia-smi -L >"$OUT/gpu.txt" 2>&1
run kernels 240 python3 -m gpu_backend.bench.kernels --out "$OUT/kernels-trial-h200.json" \
    --threads 0,16,32,64,128 --updates 3
run verify-gpu 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200.json"
run bench-wgpu 90 python3 -m service.cli bench model --shape trial --backend wgpu \
    --out "$OUT/model-trial-wgpu.json"
