#!/bin/sh
# The H200 call of the thirty-sixth session (issue 14), 2026-12-05: the device came late
# (six tries got no machine), so the thirty-fifth session's two calls shrink to one: the
# trial round here (e6f16c9: the bar's reweighing by one step, the instruments at risk
# run on between bars by their worst of seven probes, a cold start's too) against base34
# (a `git archive` of d5f2c87, the tree the thirty-third session's H200 figures ran in,
# before any of these), alternated, and here at a margin of 0.6 once. Set-up as in
# h200-thirtyfifth.sh, carrying .gl, .whl, .whl-np and scratch/trees/base34.
set -u
ROOT=$(pwd)
SESSION=thirtysixth
TAG=thirtysixth-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
TREES=$ROOT/scratch/trees
round "$ROOT" "head36-1" wgpu 12 3
round "$TREES/base34" "base34-1" wgpu 12 3
round "$ROOT" "margin06-36" wgpu 12 3 --between-bars-margin 0.6
round "$TREES/base34" "base34-2" wgpu 12 3
round "$ROOT" "head36-2" wgpu 12 3
bundle one
