#!/bin/sh
# The twenty-sixth session's H200 calls (issue 14), 2026-12-04.
# `one`: what bounds the lanes the one-dispatch sampler runs at once: occupancy_probe.py,
# a warm batch's device time at 6 to 32 lanes per multiprocessor, as built and with 4 KB
# and 12 KB more workgroup memory per lane; and the device process's float32 replies on
# the H200 host's CPU (reply_transfer.py, the trial shape's first gathering and 640 lanes).
# `two`: the lane sampler's scan rounds as shuffles (the subgroup's 32 threads are a lane's):
# the device's measured subgroup size; occupancy_probe.py, workgroup rounds against
# shuffles at 8 to 40 lanes per multiprocessor (the same bits checked at every size);
# verify-gpu --quick and the golden digest; the trial round with shuffles (this tree) and
# with workgroup rounds (head26: a `git archive` tree of 35377f0, carried as
# scratch/trees/head26), own device each.
# `three`: what a gradient is made of where the GPU is full (lane_parts.py 990: 3,960
# lanes, shuffled rounds), and the trial round alternated twice more, workgroup rounds
# (head26) against shuffles (this tree).
# `four`: the same at 3,960 lanes with the leapfrog steps' gradients and the draws' records
# taken out too, 9 runs each, twice; and at 268 (one account's narrow lanes, where a lane's
# latency sets the time).
# `five`: lane_parts.py at 3,960 lanes again, with the shuffled sums' tree moving each
# float64 as one float32 and over 3 of its 9 sums (what the tree's cost is made of).
# `six`: lane_parts.py at 3,960 and 1,072 lanes with the sums' tree written out (constant
# indices) and thread 0's parts of an iteration taken out.
# `seven`: the shuffled sums' tree written out (this tree) against its two loops (loop26:
# a `git archive` tree of 6702b1f, carried as scratch/trees/loop26): verify-gpu --quick
# and the golden digest; lane_parts.py at 1,072 and 3,960 lanes in each tree; the trial
# round alternated twice, own device each.
# `eight`: the shuffled scan rounds written out too (this tree: f04ea6d with
# docs/bench-results/scan-rounds-written-out.patch applied, `git apply` it first; not
# adopted, so not in the package) against f04ea6d (tree26, carried as
# scratch/trees/tree26: the sums' tree written out, the scans' rounds a loop):
# verify-gpu --quick; lane_parts.py at 1,072 and 3,960 lanes in each tree; the trial
# round once each.
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
ROOT=$(pwd)
SESSION=twentysixth
TAG=twentysixth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"

tree_parts() {  # tree_parts TREE NAME: lane_parts.py at 1,072 and 3,960 lanes in TREE
    for n in 268 990; do
        in_tree "$1" step "parts-$2-$n" 150 python3 docs/bench-results/lane_parts.py --runs 9 "$n"
        grep '^{' "$LOGS/parts-$2-$n.log" >"$OUT/lane-parts-$2-$n-h200-$TAG.jsonl"
    done
}

case ${1:?one to eight} in
one)
    script occupancy 240 occupancy_probe.py --from 6 --to 32 --step 2 --repeats 4 0 4096 12288
    bundle one
    script reply-transfer 120 reply_transfer.py
    script reply-transfer-640 120 reply_transfer.py 640
    bundle one
    ;;
two)
    python3 -c "from gpu_backend.wgpu_device import open_device; print(open_device().info)" \
        2>/dev/null | tail -1 >>"$OUT/summary.txt"
    script occupancy-rounds 240 occupancy_probe.py --from 8 --to 40 --step 2 --repeats 4 \
        wg:0 sg:0
    bundle two
    verify_digest "$ROOT"
    bundle two
    round "$ROOT" sg-1 wgpu 12 3
    bundle two
    round "$ROOT/scratch/trees/head26" wg-1 wgpu 12 3
    bundle two
    ;;
three)
    script lane-parts 300 lane_parts.py 990
    bundle three
    for n in 2 3; do
        round "$ROOT/scratch/trees/head26" "wg-$n" wgpu 12 3
        round "$ROOT" "sg-$n" wgpu 12 3
        bundle three
    done
    ;;
four)
    script lane-parts-990-a 200 lane_parts.py --runs 9 990
    bundle four
    script lane-parts-990-b 200 lane_parts.py --runs 9 990
    bundle four
    script lane-parts-268 150 lane_parts.py --runs 9 268
    bundle four
    ;;
five)
    script lane-parts-990-c 200 lane_parts.py --runs 9 990
    bundle five
    ;;
six)
    script lane-parts-990-d 240 lane_parts.py --runs 9 990
    bundle six
    script lane-parts-268-d 150 lane_parts.py --runs 9 268
    bundle six
    ;;
seven)
    verify_digest "$ROOT"
    bundle seven
    LOOP="$ROOT/scratch/trees/loop26"
    tree_parts "$LOOP" loops
    bundle seven
    tree_parts "$ROOT" unrolled
    bundle seven
    for n in 4 5; do
        round "$LOOP" "loops-$n" wgpu 12 3
        round "$ROOT" "unrolled-$n" wgpu 12 3
        bundle seven
    done
    ;;
eight)
    verify "$ROOT" eight
    bundle eight
    BEFORE="$ROOT/scratch/trees/tree26"
    tree_parts "$BEFORE" scans-loop
    bundle eight
    tree_parts "$ROOT" scans-out
    bundle eight
    round "$BEFORE" scans-loop wgpu 12 3
    bundle eight
    round "$ROOT" scans-out wgpu 12 3
    bundle eight
    ;;
esac
