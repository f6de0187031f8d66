#!/bin/sh
# The thirty-first session's rounds of the daemon's new default on this VM (issue 14):
# `bench round --backend auto` with neither --between-bars nor --at-bar, so [model]
# sample_between_bars = "auto", which a worker on a CPU (here wgpu on lavapipe, `auto`'s
# pick) turns on. The embedded default's shape twice, then the trial shape once. From the
# repository root with the venv's python3 first on PATH; results beside this script.
set -eu
R=docs/bench-results
TAG=thirtyfirst-2026-12-04
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45"
run() {  # run NAME FLAGS...
    name=$1
    shift
    # shellcheck disable=SC2068 # the flags split into words
    python3 -m service.cli bench round $@ --backend auto \
        --out "$R/round-dev2c-epyc-$name-auto-modeauto-$TAG.json" \
        | grep -E "warm round|cold round|between" | sed "s/^/$name: /"
}
run default-1 $DEFAULT
run default-2 $DEFAULT
run trial-1 $TRIAL
