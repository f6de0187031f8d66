#!/bin/sh
# The thirty-fourth session's H200 call (issue 14), prepared 2026-12-05 (no device was lent
# that session): the bar's reweighing by one step from the filter the sample left between
# bars (regime_model.next_bar), and the instruments at risk of the gate run on between
# bars (regime_model.reweigh.at_risk; off at margins of 0.6 and below), against
# base34 (a `git archive` tree of d5f2c87, the session's start, carried as
# scratch/trees/base34). `one`: a trial account's reweighing alone (reweigh_time.py wgpu 9
# profile) in base34 and here, alternated twice; the trial round in base34 with its
# default, then here with the default (between bars, margin 1) and at margins 0.6 and 0.5.
# `two`, right after on the same lease: the rounds again, in the reverse order. Both also
# run the default round in scratch/trees/wide34: this tree (a `git archive` of the
# commit that runs it) with gate-sent-wide34.patch applied (`patch -p1`): an instrument
# the gate sends to the bar's sampler starts there wide (an extension block's chains at
# its sample's draws), a bet on a GPU's parallel lanes that lavapipe did not pay back
# (docs/benchmarks.md, thirty-fourth session). Set-up as in h200-model.sh, carrying .gl,
# .whl, .whl-np, scratch/trees/base34 and scratch/trees/wide34 (60 MB in all).
set -u
ROOT=$(pwd)
SESSION=thirtyfourth
TAG=thirtyfourth-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
BASE=$ROOT/scratch/trees/base34
case ${1:?one or two} in
one)
    for n in 1 2; do
        in_tree "$BASE" script "reweigh-time-base34-$n" 120 reweigh_time.py wgpu 9 profile
        script "reweigh-time-step34-$n" 120 reweigh_time.py wgpu 9 profile
    done
    bundle one
    round "$BASE" "base34-1" wgpu 12 3
    round "$ROOT" "default34-1" wgpu 12 3
    round "$ROOT" "margin06-34-1" wgpu 12 3 --between-bars-margin 0.6
    round "$ROOT" "margin05-34-1" wgpu 12 3 --between-bars-margin 0.5
    round "$ROOT/scratch/trees/wide34" "wide34-1" wgpu 12 3
    bundle one
    ;;
two)
    round "$ROOT/scratch/trees/wide34" "wide34-2" wgpu 12 3
    round "$ROOT" "margin05-34-2" wgpu 12 3 --between-bars-margin 0.5
    round "$ROOT" "margin06-34-2" wgpu 12 3 --between-bars-margin 0.6
    round "$ROOT" "default34-2" wgpu 12 3
    round "$BASE" "base34-2" wgpu 12 3
    bundle two
    ;;
esac
