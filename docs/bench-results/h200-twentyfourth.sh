#!/bin/sh
# The twenty-fourth session's H200 calls (issue 14), 2026-12-03.
# `one`: what sets a gradient's cost in the one-dispatch lane sampler (lane_parts.py at 8
# and 268 instruments, in the working tree = new24); the draw's predictive from the
# gradient's own filter and the two scans in one (new24) against head24 = 023afd0:
# lane_latency.py at 8 and 268 instruments and chained_profile.py's repeats, alternated
# twice; then verify-gpu --quick and the golden digest at new24.
# `two`: a warm update's leapfrog steps (the working tree = new24s: warm 8-16, cold 3-6):
# steps_sweep.py at the trial shape on wgpu from 3:6 to 12:24; verify-gpu --quick and the
# golden digest at new24s; then the trial round at new24s and at the same code with the
# warm steps at 3-6 (w36) and 5-10 (w510).
# `three`: the warm steps at 4-8 (the working tree = new24t) against 3-6 (w36): the trial
# round alternated twice; steps_sweep.py 3:6 4:8 twice in one process (both on a lease
# that has run before); `bench model --shape trial` twice; verify-gpu --quick and the
# golden digest at new24t.
# `four`: the session's last code (warm steps 4-8, the t bound of the warm-sampler check):
# warm_agreement.py 8 (the check replicate by replicate), verify-gpu --quick and the
# golden digest, then `bench model --shape trial` twice.
# (In `one` the latency step's loop variable overwrote the pass number, so the second
# pass's files replaced the first's and head24's are named head24-268: the results hold
# lane_latency.py's lines of both passes, and chained_profile.py's of the second.)
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np and the trees named
# (scratch/trees/head24; w36 and w510).
set -u
ROOT=$(pwd)
SESSION=twentyfourth
TAG=twentyfourth-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

chained() {  # chained TREE NAME: chained_profile.py's repeats at the trial shape
    (cd "$1" && PYTHONPATH="$(pwd):$PYTHONPATH" step "chained-$2" 150 \
        python3 "$ROOT/docs/bench-results/chained_profile.py" trial wgpu 5 3)
    grep '^{' "$LOGS/chained-$2.log" >"$OUT/chained-$2-h200-$TAG.jsonl"
}

latency() {  # latency TREE NAME: lane_latency.py at 8 and 268 instruments, 32 threads, T 256
    for size in 8 268; do
        (cd "$1" && PYTHONPATH="$(pwd):$PYTHONPATH" step "latency-$2-$size" 120 \
            python3 "$ROOT/docs/bench-results/lane_latency.py" "$size" 32:256)
        grep '^{' "$LOGS/latency-$2-$size.log" >>"$OUT/lane-latency-$2-h200-$TAG.jsonl"
    done
}

case ${1:?one, two, three or four} in
one)
    H24=scratch/trees/head24
    script lane-parts 240 lane_parts.py 8 268
    bundle one
    for n in 1 2; do
        latency "$ROOT" "new24-$n"
        latency $H24 "head24-$n"
        chained "$ROOT" "new24-$n"
        chained $H24 "head24-$n"
        bundle one
    done
    verify_digest "$ROOT"
    bundle one
    ;;
two)
    script steps-sweep 240 steps_sweep.py trial wgpu 5 3:6 4:8 5:10 6:12 8:16 10:20 12:24
    bundle two
    verify_digest "$ROOT"
    bundle two
    round "$ROOT" new24s wgpu 12 3
    bundle two
    round scratch/trees/w36 w36 wgpu 12 3
    bundle two
    round scratch/trees/w510 w510 wgpu 12 3
    bundle two
    ;;
three)
    for n in 1 2; do
        round "$ROOT" "new24t-$n" wgpu 12 3
        round scratch/trees/w36 "w36-$n" wgpu 12 3
        bundle three
    done
    script steps-sweep-new24t 150 steps_sweep.py trial wgpu 5 3:6 4:8 3:6 4:8
    model "$ROOT" new24t-1
    model "$ROOT" new24t-2
    bundle three
    verify_digest "$ROOT"
    bundle three
    ;;
four)
    script warm-agreement 240 warm_agreement.py 8
    bundle four
    verify_digest "$ROOT"
    bundle four
    model "$ROOT" final24-1
    model "$ROOT" final24-2
    bundle four
    ;;
esac
