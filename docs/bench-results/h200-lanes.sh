#!/bin/sh
# Issue 14, a workgroup per lane: every H200 figure of docs/benchmarks.md's section
# "A workgroup per lane" in one device call (after the set-up lines of h200-model.sh).
# Each kernel setting runs in its own process (in one process the later settings of a
# sweep measured up to 5x slower per gradient: see the section).
set -u
OUT=${OUT:?set OUT to the folder for the results}
. "$(dirname "$0")/steps.sh"
nvidia-smi -L >"$OUT/gpu.txt" 2>&1
for lt in 0 16 32 64; do
    run "kernels-$lt" 100 python3 -m gpu_backend.bench.kernels --threads "$lt" --updates 3 \
        --repeats 9 --steps 40 --out "$OUT/kernels-trial-lt$lt-h200.json"
done
for lanes in 256 4096; do
    run "kernels-lanes-$lanes" 100 python3 -m gpu_backend.bench.kernels --threads 64 \
        --lanes "$lanes" --updates 2 --repeats 9 --steps 40 --out "$OUT/kernels-lanes$lanes-h200.json"
done
run bench-wgpu 90 python3 -m service.cli bench model --shape trial --backend wgpu \
    --out "$OUT/model-trial-wgpu-h200.json"
run verify-gpu 150 python3 -m service.cli verify-gpu --quick --out "$OUT/verify-h200.json"
