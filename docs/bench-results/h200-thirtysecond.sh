#!/bin/sh
# The H200 call prepared in the thirty-second session (issue 14), 2026-12-05, to run after
# h200-thirtyfirst.sh one (no device was lent in either session).
# `two`: the issue's wgpu / numpy ratio in one call, like with like: the trial round on
# wgpu and on numpy, both `--at-bar` (the sampler against the sampler); then numpy with
# its default since the thirty-first session, between bars (its pass one forward filter
# since the thirty-second), paced to leave each account's sampler its time between bars.
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
ROOT=$(pwd)
SESSION=thirtysecond
TAG=thirtysecond-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
case ${1:?two} in
two)
    round "$ROOT" ratio-atbar wgpu 12 3 --at-bar
    round "$ROOT" ratio-atbar numpy 5 40 --at-bar
    bundle two
    round "$ROOT" ratio-between numpy 6 15 --between-bars
    bundle two
    ;;
esac
