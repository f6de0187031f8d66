#!/bin/sh
# The thirty-third session's H200 call (issue 14), 2026-12-05, run right after
# h200-thirtyfirst.sh one on the same lease. `margin`: the trial round between bars in
# scratch/trees/margin33 (a `git archive` tree of c2dace3 with an experiment's knob,
# RT_SAMPLE_MARGIN, in service/worker/between_bars.py: between-bars-margin33.patch; the
# sampler between bars runs on until its Monte Carlo errors are within that share of the
# gate, every instrument sampled again between bars; trading keeps the gate itself), at
# 1 (as c2dace3) and 0.6, alternated twice. Set-up as in h200-model.sh, carrying .gl,
# .whl, .whl-np and scratch/trees/margin33 (make it with the patch applied to c2dace3).
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
esac
