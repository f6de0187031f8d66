#!/bin/sh
# The twenty-third session's H200 calls (issue 14), 2026-12-03.
# `one`: shared_device.py (written in the twenty-second session, not run there): five
# accounts of 54 in one process on one device, serial, on threads, on threads with their
# runs gathered into one submission, and as one batch of 270, back to back and 3 s apart
# with the clock wake; then verify-gpu --quick (its joint-submission check on the GPU),
# the golden digest, and `bench model --shape trial --backend wgpu` (the chained ESS).
# `two`: the run's summary on the device (new23) against head23 = 45502c7 (the host's
# summary), alternated: `bench model --shape trial` (the chained ESS), runon_blocks.py at
# 268 and 54 instruments in the daemon's mode, and the trial round twice each; then
# shared_device.py's four ways at new23, verify-gpu --quick (its summary check) and the
# golden digest.
# `three`: where a chained update's time goes: chained_profile.py trial wgpu 5 3 at new23
# and head23 (the repeats' spread), then at new23 under cProfile.
# `four`: new23b = 665a59f (the chained updates without parameter diagnostics, the
# returns' scaling from a sort) against head23 and new23: `bench model --shape trial`
# alternated twice, then chained_profile.py's repeats at new23b, then under cProfile.
# `five`: new23c = ea43d11 (wide instruments summarised on the device too) against new23:
# runon_blocks.py at 268 and 54 alternated twice, the trial round twice each, then
# chained_profile.py's repeats and verify-gpu --quick at new23c.
# (In `five` runon_blocks.py, since 92a3f6a calling refresh(diagnose=...), failed in the
# new23 tree, which still takes diagnose_all: only new23c's runs are in its results.)
# `six`: the chained ESS at the session's end (head23d = 103b5a8, ea43d11 reverted):
# chained_profile.py in three processes of three repeats, then `bench model` twice.
# `seven`: new23e (the summary's ranks by counting, wide instruments on the device too)
# against head23d: verify-gpu --quick at new23e, runon_blocks.py at 268 and 54 for both,
# then the trial round once each.
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np (and for `two` the trees
# scratch/trees/new23 and head23); `one` runs in the working tree.
set -u
ROOT=$(pwd)
SESSION=twentythird
TAG=twentythird-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

runon() {  # runon TREE NAME N: runon_blocks.py at N instruments in the daemon's mode
    (cd "$1" && export DIAGNOSTICS=unconverged PYTHONPATH="$(pwd):$PYTHONPATH" &&
        step "runon-$2-$3" 100 python3 "$ROOT/docs/bench-results/runon_blocks.py" "$3" wgpu 12)
    grep '^{' "$LOGS/runon-$2-$3.log" >"$OUT/runon-blocks-h200-$3-$2-$TAG.jsonl"
}

chained() {  # chained TREE NAME: chained_profile.py's repeats at the trial shape
    (cd "$1" && PYTHONPATH="$(pwd):$PYTHONPATH" step "chained-$2" 150 \
        python3 "$ROOT/docs/bench-results/chained_profile.py" trial wgpu 5 3)
    grep '^{' "$LOGS/chained-$2.log" >"$OUT/chained-$2-h200-$TAG.jsonl"
}

chained_profiled() {  # chained_profiled TREE NAME: the same, its last repeat under cProfile
    export PROFILE="$OUT/chained-profile-$2-h200-$TAG.txt"
    chained "$1" "$2-profiled"
    unset PROFILE
}

case ${1:?one, two, three, four, five, six or seven} in
one)
    script shared-device-0 150 shared_device.py 5 54 6 0 0
    bundle one
    script shared-device-3 150 shared_device.py 5 54 6 3 0.5
    bundle one
    verify_digest "$ROOT"
    bundle one
    model "$ROOT" head23
    bundle one
    ;;
two)
    N23=scratch/trees/new23
    H23=scratch/trees/head23
    for n in 1 2; do
        model $N23 "new23-$n"
        model $H23 "head23-$n"
        runon $N23 "new23-$n" 268
        runon $H23 "head23-$n" 268
        runon $N23 "new23-$n" 54
        runon $H23 "head23-$n" 54
        bundle two
    done
    for n in 1 2; do
        round $N23 "new23-$n" wgpu 12 3
        round $H23 "head23-$n" wgpu 12 3
        bundle two
    done
    (cd $N23 && PYTHONPATH="$(pwd):$PYTHONPATH" step shared-device-new23 150 \
        python3 "$ROOT/docs/bench-results/shared_device.py" 5 54 4 0 0)
    grep '^{' "$LOGS/shared-device-new23.log" >"$OUT/shared-device-new23-h200-$TAG.jsonl"
    verify_digest $N23
    bundle two
    ;;
three)
    N23=scratch/trees/new23
    H23=scratch/trees/head23
    chained $N23 new23
    chained $H23 head23
    bundle three
    chained_profiled $N23 new23
    bundle three
    ;;
four)
    B23=scratch/trees/new23b
    N23=scratch/trees/new23
    H23=scratch/trees/head23
    for n in 1 2; do
        model $B23 "new23b-$n"
        model $N23 "new23-four-$n"
        model $H23 "head23-four-$n"
    done
    bundle four
    chained $B23 new23b
    chained_profiled $B23 new23b
    bundle four
    ;;
five)
    C23=scratch/trees/new23c
    N23=scratch/trees/new23
    for n in 1 2; do
        runon $C23 "new23c-$n" 268
        runon $N23 "new23-five-$n" 268
        runon $C23 "new23c-$n" 54
        runon $N23 "new23-five-$n" 54
    done
    bundle five
    for n in 1 2; do
        round $C23 "new23c-$n" wgpu 12 3
        round $N23 "new23-five-$n" wgpu 12 3
        bundle five
    done
    chained $C23 new23c
    verify $C23 five
    bundle five
    ;;
six)
    D23=scratch/trees/head23d
    for n in 1 2 3; do
        chained $D23 "head23d-$n"
    done
    model $D23 head23d-1
    model $D23 head23d-2
    bundle six
    ;;
seven)
    E23=scratch/trees/new23e
    D23=scratch/trees/head23d
    verify $E23 seven
    bundle seven
    for n in 268 54; do
        runon $E23 new23e "$n"
        runon $D23 head23d "$n"
    done
    bundle seven
    round $E23 new23e wgpu 12 3
    bundle seven
    round $D23 head23d wgpu 12 3
    bundle seven
    ;;
esac
