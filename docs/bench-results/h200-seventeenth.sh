#!/bin/sh
# The seventeenth session's H200 calls (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/: base (fc90d89, the sixteenth session's
# measured head) and head (the commit measured); a command runs inside its tree.
# `one`: verify-gpu --quick and `bench digest` at head; `bench stages` (12 warm updates)
# at 268 instruments, head and base alternated twice, and at 54 once each; `bench model
# --shape trial` head and base alternated twice (the summary's time, ESS/s); `bench round`
# at the trial shape on wgpu, head then base. `two`: `bench round` on wgpu and on numpy at
# head (the ratio in one call), and a profile of `bench model` at head (where the host's
# share of a warm update goes on this host). `three` (head 0e8186a: the gate's diagnostics
# split over the pool; base 9f07eec): `bench digest` at head (the split runs on this
# host's 4 threads), `bench model --shape trial` head and base alternated three times,
# `bench round` on wgpu head then base. `four` (the same trees): `bench round` on wgpu,
# base, head, head, base. `five` (base = 2b3c786; head = base with the order outcomes
# committed without an fsync; t1 = base with deferred_diagnostics.MAX_THREADS = 1, an
# experiment: do the round's five workers' diagnostic threads slow each other's run-on?):
# `bench stages` at 268, head and base alternated twice; `bench round` on wgpu, base, t1,
# t1, base.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np, scratch/trees/{base,head}.
set -u
OUT=${OUT:?set OUT to the folder for the results}
FINAL=$(cd "$OUT" && pwd)
OUT=/tmp/h200-seventeenth-results
LOGS=/tmp/h200-seventeenth-logs
TAG=seventeenth-2026-12-03
CALLS=h200-seventeenth
HEAD=scratch/trees/head
BASE=scratch/trees/base
. "$(dirname "$0")/h200-lib.sh"
case ${1:?one, two, three, four or five} in
one)
    verify_digest $HEAD
    stages $HEAD head 268; stages $BASE base 268; stages $HEAD head-2 268; stages $BASE base-2 268
    stages $HEAD head 54; stages $BASE base 54
    model $HEAD head; model $BASE base; model $HEAD head-2; model $BASE base-2
    round $HEAD head wgpu 12 3
    round $BASE base wgpu 12 3
    bundle one
    ;;
two)
    round $HEAD head-2 wgpu 12 3
    round $HEAD head-2 numpy 5 40
    in_tree $HEAD step profile 150 python3 -m cProfile -s tottime -m service.cli bench model \
        --shape trial --backend wgpu --out /tmp/model-profiled.json
    sed -n "/Ordered by/,+80p" "$LOGS/profile.log" >"$OUT/profile-model-trial-h200-wgpu-$TAG.txt"
    bundle two
    ;;
three)
    in_tree $HEAD step digest 120 python3 -m service.cli bench digest --json
    grep '^{' "$LOGS/digest.log" >"$OUT/digest-h200-3-$TAG.json"
    for n in 3 4 5; do model $HEAD head-$n; model $BASE base-$n; done
    round $HEAD head-3 wgpu 12 3
    round $BASE base-3 wgpu 12 3
    bundle three
    ;;
four)
    round $BASE base-4 wgpu 12 3
    round $HEAD head-4 wgpu 12 3
    round $HEAD head-5 wgpu 12 3
    round $BASE base-5 wgpu 12 3
    bundle four
    ;;
five)
    stages $HEAD head-5 268; stages $BASE base-5 268; stages $HEAD head-6 268
    stages $BASE base-6 268
    round $BASE base-6 wgpu 12 3
    round scratch/trees/t1 threads1-6 wgpu 12 3
    round scratch/trees/t1 threads1-7 wgpu 12 3
    round $BASE base-7 wgpu 12 3
    bundle five
    ;;
esac
