#!/bin/sh
# The twentieth session's H200 call (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/; a command runs inside its tree.
# `one` (new20 = fa12a53, the lane sampler's run split where a driver bounds loops; one
# dispatch still on a GPU): verify-gpu --quick and the golden digest at new20; `bench model
# --shape trial` at new20 and head20 (b851727, before it) alternated twice; the trial round
# at new20; lane_latency.py (what a gradient costs inside the lane sampler by threads per
# lane and window) at 8 instruments over six settings and at 268 at the daemon's 32:256;
# chains_draws.py at 268 (4 chains x 40 draws, the default, against 8 x 20 and 16 x 10).
# `two`: call one's round came out slower than the nineteenth session's (328.7 against 268.7
# ms warm p50) with more host CPU per update: the trial round at head20 and again at new20 in
# one call, and lane_latency.py at 268 (32:256) at both, before and after the rounds.
# `three` (new20b: the split's code only in the CPU adapters' module, a GPU's module as it
# was): the trial round at new20b, head20, new20b; lane_latency.py at both before and after.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and the trees named below.
set -u
ROOT=$(pwd)
SESSION=twentieth
TAG=twentieth-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

latency() {  # latency TREE NAME N SETTINGS...: lane_latency.py
    tree=$1 name=$2 n=$3
    shift 3
    in_tree "$tree" step "latency-$name-$n" 200 python3 \
        "$ROOT/docs/bench-results/lane_latency.py" "$n" "$@"
    grep '^{' "$LOGS/latency-$name-$n.log" >"$OUT/lane-latency-h200-$n-$name-$TAG.jsonl"
}

case ${1:?one, two, three or four} in
one)
    N20=scratch/trees/new20
    H20=scratch/trees/head20
    verify_digest $N20
    model $N20 new20; model $H20 head20; model $H20 head20-2; model $N20 new20-2
    bundle one  # what has come so far, should the call run out of time
    latency $N20 new20 8
    latency $N20 new20 268 32:256
    in_tree $N20 step chains-268 200 python3 "$ROOT/docs/bench-results/chains_draws.py" \
        268 wgpu 6 4:40 8:20 16:10
    grep '^{' "$LOGS/chains-268.log" >"$OUT/chains-draws-h200-268-new20-$TAG.jsonl"
    bundle one
    round $N20 new20 wgpu 12 3
    bundle one
    ;;
two)
    N20=scratch/trees/new20
    H20=scratch/trees/head20
    latency $H20 head20-two 268 32:256; latency $N20 new20-two 268 32:256
    round $H20 head20-two wgpu 12 3
    bundle two
    round $N20 new20-two wgpu 12 3
    latency $H20 head20-two-2 268 32:256; latency $N20 new20-two-2 268 32:256
    bundle two
    ;;
three)
    N20B=scratch/trees/new20b
    H20=scratch/trees/head20
    latency $N20B new20b-three 268 32:256; latency $H20 head20-three 268 32:256
    round $N20B new20b-three wgpu 12 3
    bundle three
    round $H20 head20-three wgpu 12 3
    bundle three
    round $N20B new20b-three-2 wgpu 12 3
    latency $N20B new20b-three-2 268 32:256; latency $H20 head20-three-2 268 32:256
    bundle three
    ;;
four)  # verify-gpu --quick and the golden digest at new20b (6678d23)
    TAG=twentieth-new20b-2026-12-03
    verify_digest scratch/trees/new20b
    bundle four
    ;;
esac
