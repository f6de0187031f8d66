#!/bin/sh
# The H200 calls prepared in the thirty-second session (issue 14), 2026-12-05. No device
# was lent in the thirty-first or thirty-second session, so `one` is the thirty-first's
# call (h200-thirtyfirst.sh) under this session's tag:
# `one`: verify-gpu --quick and the golden digest in this tree; a trial account's
# reweighing alone (reweigh_time.py wgpu 9) in base31 (a `git archive` tree of ef08562,
# before each window went up once, carried as scratch/trees/base31) and here, alternated
# twice; the trial round with `--between-bars` and `--at-bar` (a GPU's default), alternated
# twice.
# `two`: the issue's wgpu / numpy ratio in one call, like with like: the trial round on
# wgpu and on numpy, both `--at-bar` (the sampler against the sampler); then numpy with
# its default since the thirty-first session, between bars (its pass one forward filter
# since the thirty-second), paced to leave each account's sampler its time between bars.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees/base31 alone
# (the carry holds 64 MiB in all); make the tree with
#   mkdir -p scratch/trees/base31 && git archive ef08562 | tar -x -C scratch/trees/base31
set -u
ROOT=$(pwd)
SESSION=thirtysecond
TAG=thirtysecond-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
case ${1:?one or two} in
one)
    verify_digest "$ROOT"
    for n in 1 2; do
        in_tree "$ROOT/scratch/trees/base31" script "reweigh-time-base31-$n" 120 reweigh_time.py wgpu 9
        script "reweigh-time-rows-$n" 120 reweigh_time.py wgpu 9
    done
    bundle one
    for n in 1 2; do
        round "$ROOT" "between32-$n" wgpu 12 3 --between-bars
        round "$ROOT" "atbar32-$n" wgpu 12 3 --at-bar
        bundle one
    done
    ;;
two)
    round "$ROOT" ratio-atbar wgpu 12 3 --at-bar
    round "$ROOT" ratio-atbar numpy 5 40 --at-bar
    bundle two
    round "$ROOT" ratio-between numpy 6 15 --between-bars
    bundle two
    ;;
esac
