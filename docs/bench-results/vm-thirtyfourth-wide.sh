#!/bin/sh
# The thirty-fourth session's second change on this VM: an instrument the gate sends to the
# bar's sampler starts wide there (an extension block's chains at its sample's draws)
# instead of running narrow and then on. STEP (a `git archive` tree of d786481, the step
# alone) against WIDE (a tree of the change). Usage, from the repository root with the
# venv's python first on PATH:
#   sh docs/bench-results/vm-thirtyfourth-wide.sh scratch/trees/step34 scratch/trees/wide34
# `bench round --backend auto` (lavapipe), the trial shape, alternated twice (the second
# time in the other order), and the embedded default's shape twice each.
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtyfourth-2026-12-05
STEP=$1
WIDE=$2
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45"
for run in "trial-1 $STEP" "trial-1 $WIDE" "trial-2 $WIDE" "trial-2 $STEP" \
           "default-1 $STEP" "default-1 $WIDE" "default-2 $WIDE" "default-2 $STEP"; do
    name=${run%% *}
    tree=${run#* }
    flags=$TRIAL
    case $name in default*) flags=$DEFAULT ;; esac
    abs=$(cd "$tree" && pwd)
    base=$(basename "$tree")
    # shellcheck disable=SC2086 # the flags split into words
    (cd "$abs" && PYTHONPATH=$abs python -m service.cli bench round $flags --backend auto \
        --out "$R/round-wide-$name-auto-$base-$TAG.json") \
        | grep -E "warm round|between bars" | sed "s/^/$name $base: /"
done
