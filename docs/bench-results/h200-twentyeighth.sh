#!/bin/sh
# The twenty-eighth session's H200 calls (issue 14), 2026-12-04: how wide a two-readings
# window starts ([model] extension_chains), against the run-on blocks it saves.
# `one`: the trial round, own device each, at extension_chains 32 (the default until this
# session) and 64, alternated twice (bench round --extension-chains).
# `two`: a wide run's instruments summarised on the device too (the wide pass: 1,280
# pooled draws sorted in workgroup memory): verify-gpu --quick and the golden digest in
# this tree; the trial round, own device each, alternated twice between base28 (a `git
# archive` tree of 86295c0, the commit before, carried as scratch/trees/base28) and this
# tree (named wsum in the results).
# `three`: the wide pass with no index sorted beside the values, a thread per pair of the
# sort and the autocovariance over lags and groups of chains (this tree, named wsum2):
# verify-gpu --quick and the golden digest; summary_pass.py (the pass alone at a trial
# account's shape, with and without its 18 wide instruments), twice; the trial round
# alternated twice between base28 and this tree.
# `four`: the shared device with run-on blocks gathered by stage and replies on a thread
# each (this tree, named shared-new) against the shared device as it was (pre29, a `git
# archive` tree of f4d92a9, carried as scratch/trees/pre29; named shared-pre) and each
# worker on its own device (this tree; own): the trial round with `--shared-device`, in
# turn twice.
# `five`: the session's last tree (named head28): verify-gpu --quick and the golden digest;
# the trial round twice, own device each.
# `six`: the trial round once at the session's end (036fd40's score tables, each uploaded
# once; named head28b).
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np (and scratch/trees for `two`,
# `three` and `four`).
set -u
ROOT=$(pwd)
SESSION=twentyeighth
TAG=twentyeighth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"

case ${1:?one to six} in
one)
    for n in 1 2; do
        round "$ROOT" "e32-$n" wgpu 12 3 --extension-chains 32
        round "$ROOT" "e64-$n" wgpu 12 3 --extension-chains 64
        bundle one
    done
    ;;
two)
    verify_digest "$ROOT"
    bundle two
    for n in 1 2; do
        round "$ROOT/scratch/trees/base28" "base28-$n" wgpu 12 3
        round "$ROOT" "wsum-$n" wgpu 12 3
        bundle two
    done
    ;;
three)
    verify_digest "$ROOT"
    script summary-pass-1 60 summary_pass.py 40
    script summary-pass-2 60 summary_pass.py 40
    bundle three
    for n in 1 2; do
        round "$ROOT/scratch/trees/base28" "base28-$n" wgpu 12 3
        round "$ROOT" "wsum2-$n" wgpu 12 3
        bundle three
    done
    ;;
four)
    for n in 1 2; do
        round "$ROOT" "shared-new-$n" wgpu 12 3 --shared-device
        round "$ROOT" "own-$n" wgpu 12 3
        round "$ROOT/scratch/trees/pre29" "shared-pre-$n" wgpu 12 3 --shared-device
        bundle four
    done
    ;;
five)
    verify_digest "$ROOT"
    bundle five
    for n in 1 2; do
        round "$ROOT" "head28-$n" wgpu 12 3
        bundle five
    done
    ;;
six)
    round "$ROOT" head28b-1 wgpu 12 3
    bundle six
    ;;
esac
