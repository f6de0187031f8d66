#!/bin/sh
# The H200 call prepared in the thirty-fifth session (issue 14), 2026-12-05 (no device was
# lent in the thirty-fourth or thirty-fifth session): the trial round here (the bar's
# reweighing by one step, the instruments at risk of the gate run on between bars to the
# share their worst of seven probes asks, a cold start's too, and a constant decision
# quantity weighed by the other's ESS) against base34 (a `git archive` of d5f2c87: neither) and
# base35 (of ae20b69: the run-on to 0.6 of the gate alone), and here at a margin of 0.6
# (which turns the at-risk run-on off), and in scratch/trees/wide35 (a `git archive` of
# the commit that runs it with gate-sent-wide34.patch applied by `patch -p1`: an
# instrument the gate sends starts wide at the bar). `one`: a trial account's reweighing
# alone (reweigh_time.py wgpu 9 profile) in base34 and here, then the rounds; `two`, right
# after on the same lease, the rounds in the reverse order. Set-up as in h200-model.sh,
# carrying .gl, .whl, .whl-np and scratch/trees/{base34,base35,wide35} (about 65 MB).
set -u
ROOT=$(pwd)
SESSION=thirtyfifth
TAG=thirtyfifth-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
TREES=$ROOT/scratch/trees
case ${1:?one or two} in
one)
    in_tree "$TREES/base34" script "reweigh-time-base34" 120 reweigh_time.py wgpu 9 profile
    script "reweigh-time-head35" 120 reweigh_time.py wgpu 9 profile
    bundle one
    round "$TREES/base34" "base34-1" wgpu 12 3
    round "$TREES/base35" "base35-1" wgpu 12 3
    round "$ROOT" "head35-1" wgpu 12 3
    round "$ROOT" "margin06-35-1" wgpu 12 3 --between-bars-margin 0.6
    round "$TREES/wide35" "wide35-1" wgpu 12 3
    bundle one
    ;;
two)
    round "$TREES/wide35" "wide35-2" wgpu 12 3
    round "$ROOT" "margin06-35-2" wgpu 12 3 --between-bars-margin 0.6
    round "$ROOT" "head35-2" wgpu 12 3
    round "$TREES/base35" "base35-2" wgpu 12 3
    round "$TREES/base34" "base34-2" wgpu 12 3
    bundle two
    ;;
esac
