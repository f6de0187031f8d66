#!/bin/sh
# The thirty-first session's daemon rounds on this VM (issue 14): `bench round
# --between-bars` in base31 (a `git archive` tree of ef08562: each window repeated per
# draw on the bar's pass) and rows31 (of 0549af1: each window once), alternated; the
# trial shape once each, then the embedded default's twice each. From the repository
# root, with the venv's python3 first on PATH; results in docs/bench-results.
set -eu
ROOT=$(pwd)
TAG=thirtyfirst-2026-12-04
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45"
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
run() {  # run TREE SHAPE_NAME N FLAGS...
    tree=$1 shape=$2 n=$3
    shift 3
    # shellcheck disable=SC2068 # the flags split into words
    (cd "$ROOT/scratch/trees/$tree" && PYTHONPATH=$(pwd) python3 -m service.cli bench round $@ \
        --backend auto --between-bars \
        --out "$ROOT/docs/bench-results/round-dev2c-epyc-$shape-auto-$tree-$n-$TAG.json") \
        | grep -E "warm round|cold round|between" | sed "s/^/$tree $shape $n: /"
}
for tree in rows31 base31; do run "$tree" trial 1 $TRIAL; done
for n in 1 2; do
    for tree in rows31 base31; do run "$tree" default "$n" $DEFAULT; done
done
