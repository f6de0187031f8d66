#!/bin/sh
# The twenty-seventh session's H200 calls (issue 14), 2026-12-04: the lane sampler's
# thread 0 keeping its lane's state in registers for the whole run.
# Trees: base27 (a `git archive` tree of 6f12f8b, the session's start), regs1 (a step on
# the way to 387f896, not kept: the sampler's state words and floats private to thread 0,
# the position, gradient and log density still in the lanes' buffers), and this tree
# (387f896: all of them private), carried as scratch/trees/base27 and scratch/trees/regs1.
# `one`: verify-gpu --quick and the golden digest in this tree; then lane_parts.py's
# "as built" run at 1,072 and 3,960 lanes (268 and 990 instruments x 4 chains) in each
# tree, 9 runs, the three trees in turn, twice.
# `two`: the trial round alternated twice, base27 against this tree (named regs2 in the
# results), own device each.
# `three`: this tree with docs/bench-results/chunk-loops-to-cmax.patch applied (`git apply`
# it first; not adopted): a chunk's loops run to the constant CMAX (chunk_alpha in
# registers): verify-gpu --quick and the golden digest; lane_parts.py "as built" at 1,072
# and 3,960 lanes in base27, regs2 (387f896's packages, scratch/trees/regs2) and this tree
# in turn, twice.
# `four`: the trial round alternated twice, regs2 against this tree (the patch applied).
# `five`: the trial round with `--shared-device` (one device process joins the workers'
# first runs into one dispatch, where the lane's state in registers shortened a full
# GPU's run) against each worker's own device, this tree, alternated twice.
# `six`: what a run's wall is made of: lane_parts.py --profile (each run's device ms from
# its compute pass's timestamps) "as built" at 32, 760, 1,072 and 3,960 lanes, twice.
# `seven`: what a trial account's first run is made of: lane_parts.py --profile with every
# variant at 760 lanes (190 x 4), twice (each variant's device ms, its host part aside).
# `eight`: the GPU's clocks while a run is latency-bound: nvidia-smi's SM clock, power and
# utilisation every 50 ms (smi-*.csv) during lane_parts.py --profile "as built" at 32, 760,
# 1,072 and 3,960 lanes, then during the trial round.
# `nine`: the sums over time as f64 (the H200's default) against compensated float32
# (Kahan): lane_parts.py --profile "as built" at 760 and 3,960 lanes, alternated twice.
# `ten`: a chunk's emissions computed once per gradient, before its three passes (this
# tree with docs/bench-results/chunk-emissions-once.patch applied, `git apply` it first;
# not adopted) against head27 (a `git archive` tree of 1d93956, scratch/trees/head27):
# verify-gpu --quick; lane_parts.py --profile "as built" at 760 and 3,960 lanes in each
# tree in turn, twice.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees.
set -u
ROOT=$(pwd)
SESSION=twentyseventh
TAG=twentyseventh-2026-12-04
. "$(dirname "$0")/h200-lib.sh"
TREES="$ROOT/scratch/trees"

as_built() {  # as_built TREE NAME N [FLAGS]: this tree's lane_parts.py, "as built", in TREE
    tree=$1 name=$2 n=$3
    shift 3
    in_tree "$tree" step "parts-$name-$n" 150 python3 "$ROOT/docs/bench-results/lane_parts.py" \
        "$@" --runs 9 --only "as built" "$n"
    grep '^{' "$LOGS/parts-$name-$n.log" >>"$OUT/lane-parts-$name-$n-h200-$TAG.jsonl"
}

case ${1:?one to ten} in
one)
    verify_digest "$ROOT"
    bundle one
    for n in 268 990; do
        for pass in 1 2; do
            as_built "$TREES/base27" base27 "$n"
            as_built "$TREES/regs1" regs1 "$n"
            as_built "$ROOT" regs2 "$n"
            bundle one
        done
    done
    ;;
two)
    for n in 1 2; do
        round "$TREES/base27" "base27-$n" wgpu 12 3
        round "$ROOT" "regs2-$n" wgpu 12 3
        bundle two
    done
    ;;
three)
    verify_digest "$ROOT"
    bundle three
    for n in 268 990; do
        for pass in 1 2; do
            as_built "$TREES/base27" base27-c "$n"
            as_built "$TREES/regs2" regs2-c "$n"
            as_built "$ROOT" regs3 "$n"
            bundle three
        done
    done
    ;;
four)
    for n in 1 2; do
        round "$TREES/regs2" "regs2-d$n" wgpu 12 3
        round "$ROOT" "regs3-$n" wgpu 12 3
        bundle four
    done
    ;;
five)
    for n in 1 2; do
        # shellcheck disable=SC2086 # TRIAL is a list of flags
        step "round-shared-$n" 330 python3 -m service.cli bench round $TRIAL --backend wgpu \
            --bars 12 --pace-s 3 --lead-s 25 --shared-device \
            --out "$OUT/round-h200-wgpu-shared-$n-$TAG.json"
        grep -E "warm round|cold round" "$LOGS/round-shared-$n.log" | sed "s/^/shared-$n: /" \
            >>"$OUT/summary.txt"
        round "$ROOT" "own-$n" wgpu 12 3
        bundle five
    done
    ;;
six)
    for pass in 1 2; do
        script "lane-parts-profile-$pass" 200 lane_parts.py --profile --runs 9 --only "as built" \
            8 190 268 990
        bundle six
    done
    ;;
seven)
    script lane-parts-profile-760 400 lane_parts.py --profile --runs 9 190 190
    bundle seven
    ;;
eight)
    smi() {  # smi NAME: nvidia-smi's readings every 50 ms until killed
        nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,utilization.gpu,power.draw \
            --format=csv,noheader -lms 50 >"$OUT/smi-h200-$1-$TAG.csv" 2>&1 &
        SMI=$!
    }
    smi parts
    script clocks-parts 200 lane_parts.py --profile --runs 9 --only "as built" 8 190 268 990
    kill "$SMI"
    bundle eight
    smi round
    round "$ROOT" clocks wgpu 12 3
    kill "$SMI"
    bundle eight
    ;;
nine)
    script lane-parts-sums-warm 100 lane_parts.py --runs 9 --only "as built" 190
    for pass in 1 2; do
        script "lane-parts-sums-f64-$pass" 100 lane_parts.py --profile --runs 9 \
            --only "as built" 190 990
        script "lane-parts-sums-kahan-$pass" 100 lane_parts.py --profile --kahan --runs 9 \
            --only "as built" 190 990
        bundle nine
    done
    ;;
ten)
    verify "$ROOT" ten
    bundle ten
    for pass in 1 2; do
        for n in 190 990; do
            as_built "$TREES/head27" "emit-base-$pass" "$n" --profile
            as_built "$ROOT" "emit-once-$pass" "$n" --profile
        done
        bundle ten
    done
    ;;
esac
