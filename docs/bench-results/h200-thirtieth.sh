#!/bin/sh
# The thirtieth session's H200 call (issue 14), 2026-12-04: an update that commits and
# sends its orders before it waits for the failing instruments' diagnostics
# (regime_model.update.refresh_then_diagnose; `model.unconverged` after the commit).
# `one`: verify-gpu --quick and the golden digest in this tree (named diaglate); what the
# bar's pass over the draws would cost if the MCMC ran between bars (bar_pass_cost.py); the
# trial round, own device each, against base30 (a `git archive` tree of 76149d3, the
# session's start, carried as scratch/trees/base30), alternated twice.
# `two`: [model] sample_between_bars (service/worker/between_bars.py; named between):
# verify-gpu --quick and the golden digest; the trial round, own device each, with
# `--between-bars` and without (named atbar: each update's sampler on the bar's path, as
# the daemon's default), alternated twice.
# `three`: the reweighing grouped by draw count (32f630d on): a trial account's reweighing
# alone with a profile of one call (reweigh_time.py wgpu 9 profile), twice; the trial round
# with `--between-bars` (named grouped) and without (atbar3), once each. Not run: the
# device machine stopped answering at this call's start, and no other was lent that day.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and scratch/trees.
set -u
ROOT=$(pwd)
SESSION=thirtieth
TAG=thirtieth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"

case ${1:?one, two or three} in
one)
    verify_digest "$ROOT"
    script bar-pass-cost 150 bar_pass_cost.py wgpu
    bundle one
    for n in 1 2; do
        round "$ROOT/scratch/trees/base30" "base30-$n" wgpu 12 3
        round "$ROOT" "diaglate-$n" wgpu 12 3
        bundle one
    done
    ;;
two)
    verify_digest "$ROOT"
    bundle two
    for n in 1 2; do
        round "$ROOT" "between-$n" wgpu 12 3 --between-bars
        round "$ROOT" "atbar-$n" wgpu 12 3
        bundle two
    done
    ;;
three)
    script reweigh-time-1 120 reweigh_time.py wgpu 9 profile
    script reweigh-time-2 120 reweigh_time.py wgpu 9 profile
    bundle three
    round "$ROOT" grouped-1 wgpu 12 3 --between-bars
    round "$ROOT" atbar3-1 wgpu 12 3
    bundle three
    ;;
esac
