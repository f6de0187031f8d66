#!/bin/sh
# The twenty-second session's H200 calls (issue 14), 2026-12-03.
# `one`: does a clock keeper (a pulse kernel on a thread, keep_warm.py) spare a paced warm update the
# idle clocks? keep_warm.py after 3 s pauses, no keeper and pulses every 10, 50 and 250 ms,
# of 4,096 and of 65,536 iterations; nvidia-smi's SM clock logged beside it.
# `two`: what raises the clocks before a paced update? clock_triggers.py, each of a 64 MB
# buffer made, 64 MB written, a pipeline compiled and a second device requested 100 ms and
# 500 ms before the update, against nothing.
# `three`: the trial round with the clock wake (new22) and without (head22 = d14480f),
# alternated three times; `bench stages --instruments 268` at new22. `four`: the trial
# round on wgpu and then on numpy at new22 (the issue's ratio in one call).
# `five`: the trial round at new22b = f33a71d (the worker diagnoses only the instruments
# that fail the gate) and new22 alternated twice; then runon_blocks.py at 54 and 268
# instruments in the daemon's mode at new22b, under cProfile (where the summary's and the
# run-on's host time goes).
# `six` (written after the budget was spent; not run this session): shared_device.py,
# five accounts of 54 in one process, serial, on threads, on threads with their runs
# gathered into one submission, and as one batch of 270, back to back and 3 s apart
# with the clock wake.
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np; runs in the working tree.
set -u
ROOT=$(pwd)
SESSION=twentysecond
TAG=twentysecond-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

case ${1:?one, two, three, four, five or six} in
one)
    nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 100 \
        >"$OUT/clocks-keep-warm-h200-$TAG.csv" 2>&1 &
    smi=$!
    script keep-warm-4096 120 keep_warm.py 3 0,10,50,250 4096 3
    bundle one
    script keep-warm-65536 120 keep_warm.py 3 0,10,50,250 65536 3
    kill $smi
    bundle one
    ;;
two)
    nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 100 \
        >"$OUT/clocks-triggers-h200-$TAG.csv" 2>&1 &
    smi=$!
    script clock-triggers-100 120 clock_triggers.py 3 100 3 none,buffer,write,pipeline,device
    bundle two
    script clock-triggers-500 120 clock_triggers.py 3 500 3 none,buffer,write,pipeline,device
    kill $smi
    bundle two
    ;;
three)
    N22=scratch/trees/new22
    H22=scratch/trees/head22
    for n in 1 2 3; do
        round $N22 "new22-$n" wgpu 12 3
        round $H22 "head22-$n" wgpu 12 3
        bundle three
    done
    stages $N22 new22 268
    bundle three
    ;;
four)
    N22=scratch/trees/new22
    round $N22 new22-four wgpu 12 3
    bundle four
    round $N22 new22-four numpy 5 40
    bundle four
    ;;
five)
    N22=scratch/trees/new22
    B22=scratch/trees/new22b
    for n in 1 2; do
        round $B22 "new22b-$n" wgpu 12 3
        round $N22 "new22-five-$n" wgpu 12 3
        bundle five
    done
    for n in 54 268; do
        (cd $B22 && export DIAGNOSTICS=unconverged \
            PROFILE="$OUT/runon-profile-$n-h200-$TAG.txt" PYTHONPATH="$(pwd):$PYTHONPATH" &&
            step "runon-profile-$n" 100 python3 "$ROOT/docs/bench-results/runon_blocks.py" \
                "$n" wgpu 12)
        grep '^{' "$LOGS/runon-profile-$n.log" >"$OUT/runon-profile-$n-h200-$TAG.jsonl"
    done
    bundle five
    ;;
six)
    script shared-device-0 150 shared_device.py 5 54 6 0 0
    bundle six
    script shared-device-3 150 shared_device.py 5 54 6 3 0.5
    bundle six
    ;;
esac
