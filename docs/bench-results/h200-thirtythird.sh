#!/bin/sh
# The thirty-third session's H200 call (issue 14), 2026-12-05, run right after
# h200-thirtyfirst.sh one on the same lease. `margin`: the trial round between bars in
# scratch/trees/margin33 (a `git archive` tree of c2dace3 with an experiment's knob,
# RT_SAMPLE_MARGIN, in service/worker/between_bars.py: between-bars-margin33.patch; the
# sampler between bars runs on until its Monte Carlo errors are within that share of the
# gate, every instrument sampled again between bars; trading keeps the gate itself), at
# 1 (as c2dace3) and 0.6, alternated twice. Set-up as in h200-model.sh, carrying .gl,
# .whl, .whl-np and scratch/trees/margin33 (make it with the patch applied to c2dace3).
# `final`, on a later lease, after the margin was built ([model] between_bars_margin,
# default 1; `bench round --between-bars-margin`) and the mode made the default on every
# backend: the golden digest; a trial account's reweighing alone (reweigh_time.py wgpu 9
# profile) in base33 (a `git archive` tree of c2dace3, the session's start, carried as
# scratch/trees/base33) and here, alternated twice; the trial round with the daemon's
# default (neither flag: between bars, margin 1), with `--between-bars-margin 0.6` and
# with `--at-bar`, in turn: default, 0.6, at the bar, default, 0.6 (the device time left
# allowed five rounds). Carry .gl, .whl, .whl-np and scratch/trees/base33.
set -u
ROOT=$(pwd)
SESSION=thirtythird
TAG=thirtythird-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
case ${1:?margin} in
margin)
    for n in 1 2; do
        export RT_SAMPLE_MARGIN=1
        round "$ROOT/scratch/trees/margin33" "margin1-$n" wgpu 12 3 --between-bars
        export RT_SAMPLE_MARGIN=0.6
        round "$ROOT/scratch/trees/margin33" "margin06-$n" wgpu 12 3 --between-bars
        bundle margin
    done
    ;;
final)
    step digest 60 python3 -m service.cli bench digest --json
    grep '^{' "$LOGS/digest.log" >"$OUT/digest-h200-$TAG.json"
    for n in 1 2; do
        in_tree "$ROOT/scratch/trees/base33" script "reweigh-time-base33-$n" 120 \
            reweigh_time.py wgpu 9 profile
        script "reweigh-time-prior33-$n" 120 reweigh_time.py wgpu 9 profile
    done
    bundle final
    for n in 1 2; do
        round "$ROOT" "default33-$n" wgpu 12 3
        round "$ROOT" "margin06-$n" wgpu 12 3 --between-bars-margin 0.6
        [ "$n" = 1 ] && round "$ROOT" "atbar33-$n" wgpu 12 3 --at-bar
        bundle final
    done
    ;;
esac
