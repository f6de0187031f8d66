#!/bin/sh
# The twenty-ninth session's H200 calls (issue 14), 2026-12-04: each bar's emission kept
# for a gradient's two passes over its chunk (shaders/hmm_scan.py's chunk_emit) instead of
# computed in each of three.
# `one`: verify-gpu --quick and the golden digest in this tree (head29); a warm batch's
# device run (lane_parts.py --runs 9 --only "as built" at 268 and 990 instruments) in
# base29 (a `git archive` tree of 1bf1ac0, the session's start, carried as
# scratch/trees/base29) and this tree, alternated twice; the trial round, own device each,
# base29 and this tree alternated twice.
# `two`: the session's last tree (a GPU computes the emissions in each pass again; named
# head29b): verify-gpu --quick and the golden digest; the trial round once, own device each.
# `three`: each update with the cycle collector paused, collecting after it
# (service/worker/deferred_gc.py; named gcdefer) against base29b (a `git archive` tree of
# cfeb5ed, carried as scratch/trees/base29b): the trial round, own device each, alternated
# twice.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees.
set -u
ROOT=$(pwd)
SESSION=twentyninth
TAG=twentyninth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"
BASE=$ROOT/scratch/trees/base29

case ${1:?one, two or three} in
one)
    verify_digest "$ROOT"
    bundle one
    for n in 1 2; do
        in_tree "$BASE" script "lane-parts-base29-$n" 120 lane_parts.py --runs 9 --only "as built" 268 990
        in_tree "$ROOT" script "lane-parts-head29-$n" 120 lane_parts.py --runs 9 --only "as built" 268 990
    done
    bundle one
    for n in 1 2; do
        round "$BASE" "base29-$n" wgpu 12 3
        round "$ROOT" "head29-$n" wgpu 12 3
        bundle one
    done
    ;;
two)
    verify_digest "$ROOT"
    bundle two
    round "$ROOT" head29b-1 wgpu 12 3
    bundle two
    ;;
three)
    for n in 1 2; do
        round "$ROOT/scratch/trees/base29b" "base29b-$n" wgpu 12 3
        round "$ROOT" "gcdefer-$n" wgpu 12 3
        bundle three
    done
    ;;
esac
