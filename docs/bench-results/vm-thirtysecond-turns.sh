#!/bin/sh
# The sampler between bars at its turn (service/worker/sampler_turn.py, thirty-second
# session), on this VM: the trial round and the embedded default's round with `bench round
# --backend auto` (lavapipe; the mode on, `auto`), in BASE (a tree of the commit before)
# and HEAD (a tree of the commit), alternated ROUNDS times. Usage, from the repository root
# with the venv's python first on PATH:
#   sh docs/bench-results/vm-thirtysecond-turns.sh BASE HEAD ROUNDS SHAPES
# SHAPES: "trial", "default" or "trial default". Results beside this script.
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtysecond-2026-12-05
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45"
BASE=$(cd "$1" && pwd)
HEAD=$(cd "$2" && pwd)
n=1
while [ "$n" -le "$3" ]; do
    for shape in $4; do
        flags=$TRIAL
        [ "$shape" = default ] && flags=$DEFAULT
        for tree in "$BASE" "$HEAD"; do
            name=$shape-auto-$(basename "$tree")-$n
            # shellcheck disable=SC2086 # the flags split into words
            (cd "$tree" && PYTHONPATH=$tree python3 -m service.cli bench round $flags \
                --backend auto --out "$R/round-$name-$TAG.json") \
                | grep -E "warm round|cold round" | sed "s/^/$name: /"
        done
    done
    n=$((n + 1))
done
