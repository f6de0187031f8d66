#!/bin/sh
# The sampler between bars run on to a margin below the gate (thirty-third session), on
# this VM before it was built: the trial round between bars in scratch/trees/margin33 (a
# `git archive` tree of c2dace3 with between-bars-margin33.patch applied: the knob
# RT_SAMPLE_MARGIN) at 0.7, then at 1 (as c2dace3); `bench round --backend auto`
# (lavapipe), pace 30 s so that the longer samplers end before the next bar. Usage, from
# the repository root with the venv's python first on PATH:
#   sh docs/bench-results/vm-thirtythird-margin.sh scratch/trees/margin33
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtythird-2026-12-05
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 30 --lead-s 45"
cd "$1"
for m in 0.7 1; do
    # shellcheck disable=SC2086 # the flags split into words
    RT_SAMPLE_MARGIN=$m PYTHONPATH=$(pwd) python3 -m service.cli bench round $TRIAL \
        --backend auto --between-bars --out "$R/round-trial-auto-margin$m-$TAG.json" \
        | grep -E "warm round|between bars" | sed "s/^/margin $m: /"
done
