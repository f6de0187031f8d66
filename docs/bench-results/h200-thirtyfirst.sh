#!/bin/sh
# The thirty-first session's H200 call (issue 14), prepared 2026-12-04: the predictive's
# rows uploaded once per instrument, not once per draw (a lane reads column
# lane / per_row of y; shaders/hmm.py, hmm_scan.py). Reweighing a trial account's 28,800
# draws sent 36 MB a bar; now its windows and draws (about 1 MB).
# `one`: verify-gpu --quick and the golden digest in this tree; a trial account's
# reweighing alone (reweigh_time.py wgpu 9) in base31 (a `git archive` tree of ef08562,
# the session's start, carried as scratch/trees/base31) and here, alternated twice (here
# with `profile`, added 2026-12-05 before its first run: one more call under cProfile); the
# trial round with `--between-bars` (named between31) and `--at-bar` (atbar31; a GPU's
# default, `auto`, is the same), alternated twice. Not run in the thirty-first or the
# thirty-second session: no device machine was lent; its results carry the day it runs.
# Run after the thirty-second session, its between-bars rounds also measure that session's
# turns (a sampler between bars waits for the other accounts' bars: on the H200 the
# thirtieth session's reweighing shared the GPU with the early accounts' samplers).
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees/base31 alone
# (the carry holds 64 MiB in all); make the tree with
#   mkdir -p scratch/trees/base31 && git archive ef08562 | tar -x -C scratch/trees/base31
set -u
ROOT=$(pwd)
SESSION=thirtyfirst
TAG=thirtyfirst-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
case ${1:?one} in
one)
    verify_digest "$ROOT"
    for n in 1 2; do
        in_tree "$ROOT/scratch/trees/base31" script "reweigh-time-base31-$n" 120 reweigh_time.py wgpu 9
        script "reweigh-time-rows-$n" 120 reweigh_time.py wgpu 9 profile
    done
    bundle one
    for n in 1 2; do
        round "$ROOT" "between31-$n" wgpu 12 3 --between-bars
        round "$ROOT" "atbar31-$n" wgpu 12 3 --at-bar
        bundle one
    done
    ;;
esac
