#!/bin/sh
# The eighteenth session's H200 call (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/: base18 (8e984d9, the session's start) and
# head18 (ae083d1: the checkpoint's windows and checksums from the returns table, the
# positions as columns, DecisionRow a NamedTuple); a command runs inside its tree.
# `one`: `bench stages` (12 warm updates) at 268 instruments, head and base alternated
# twice; `checkpoint_parts.py` (where the checkpoint stage's time goes) at 268, alternated
# twice; `bench stages` at 54 once each; `bench model --shape trial` and `bench round` at
# the trial shape on wgpu at head.
# `two` (head18 = 4c90d79, which adds the cold fetch as columns; prev18 = ae083d1, what
# `one` measured): how much of the trial round's device run is the five worker processes
# sharing one GPU. `bench round` on wgpu with one account of 54 instruments (an account
# of the trial round, alone on the GPU), one account of all 268 (every lane in one
# process's submissions), the trial round (five accounts of 53-54) at head18 then at
# prev18 (the cold round's fetch), then the one account of 54 again.
# `three` (head18 = 4c90d79): where the reconcile and orders stages' time goes at 268
# instruments (order_parts.py: the daemon's parts against the simulated broker's), twice,
# and `bench stages` at 268 once.
# `four` (head18 = 4c90d79): how the run-on is made up (runon_blocks.py: per warm update,
# each device run's lanes and wall time) at 54 and at 268 instruments, 12 warm updates.
# `five` (head18): the same at 268 under cProfile (PROFILE=...): where the run-on's host
# time goes.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np, scratch/trees/{base18,head18}.
set -u
ROOT=$(pwd)
SESSION=eighteenth
TAG=eighteenth-2026-12-03
HEAD=scratch/trees/head18
BASE=scratch/trees/base18
. "$(dirname "$0")/h200-lib.sh"

parts() {  # parts TREE NAME: checkpoint_parts.py at 268 instruments
    in_tree "$1" step "parts-$2" 120 python3 "$ROOT/docs/bench-results/checkpoint_parts.py"
    cp "$LOGS/parts-$2.log" "$OUT/checkpoint-parts-h200-268-$2-$TAG.txt"
}

case ${1:?one, two, three, four or five} in
one)
    stages $HEAD head 268; stages $BASE base 268; stages $BASE base-2 268; stages $HEAD head-2 268
    parts $HEAD head; parts $BASE base; parts $BASE base-2; parts $HEAD head-2
    stages $HEAD head 54; stages $BASE base 54
    model $HEAD head
    round $HEAD head wgpu 12 3
    bundle one
    ;;
two)
    alone() {  # alone NAME INSTRUMENTS: the round with one account of INSTRUMENTS
        in_tree $HEAD step "round-$1" 330 python3 -m service.cli bench round --accounts 1 \
            --instruments "$2" --chains 4 --window 256 --states 2 --backend wgpu --bars 12 \
            --pace-s 3 --lead-s 25 --out "$OUT/round-h200-wgpu-$1-$TAG.json"
        grep -E "warm round|cold round" "$LOGS/round-$1.log" | sed "s/^/$1: /" >>"$OUT/summary.txt"
    }
    alone alone-54 54
    alone alone-268 268
    round $HEAD head-2 wgpu 12 3
    round scratch/trees/prev18 prev wgpu 12 3
    alone alone-54-2 54
    bundle two
    ;;
three)
    for n in 1 2; do
        in_tree $HEAD step "orders-$n" 120 python3 "$ROOT/docs/bench-results/order_parts.py"
        cp "$LOGS/orders-$n.log" "$OUT/order-parts-h200-268-head-$n-$TAG.txt"
    done
    stages $HEAD head-3 268
    bundle three
    ;;
four)
    for n in 54 268; do
        in_tree $HEAD step "runon-$n" 150 python3 "$ROOT/docs/bench-results/runon_blocks.py" \
            "$n" wgpu 12
        grep '^{' "$LOGS/runon-$n.log" >"$OUT/runon-blocks-h200-$n-$TAG.jsonl"
    done
    bundle four
    ;;
five)
    PROFILE="$OUT/runon-profile-h200-268-$TAG.txt" in_tree $HEAD step runon-profile 150 \
        python3 "$ROOT/docs/bench-results/runon_blocks.py" 268 wgpu 12
    grep '^{' "$LOGS/runon-profile.log" >"$OUT/runon-blocks-h200-268-profiled-$TAG.jsonl"
    bundle five
    ;;
esac
