#!/bin/sh
# One trial account's round on this VM (issue 14, thirty-sixth session): `bench round
# --accounts 1 --instruments 54` at the trial shape, 12 bars at a 12 s pace, in BASE,
# HEAD, HEAD, BASE (trees: `git archive`s), so that the bar's own work (the model
# stage's reweighing, the checkpoint) is timed without five accounts sharing two cores.
# `PATH=/work/main/.venv/bin:$PATH sh docs/bench-results/vm-thirtysixth-one.sh NAME BASE
# HEAD`; raw JSON round-one-NAME-{base,head}-{1,2}-dev2c-epyc-thirtysixth-DATE.json.
set -eu
NAME=$1 BASE=$(cd "$2" && pwd) HEAD=$(cd "$3" && pwd)
OUT=$(pwd)/docs/bench-results
TAG=dev2c-epyc-${SESSION:-thirtysixth}-$(date +%Y-%m-%d)  # SESSION: a later session running it
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
one() {  # one TREE LABEL
    (cd "$1" && PYTHONPATH=$1 python -m service.cli bench round --accounts 1 --instruments 54 \
        --chains 4 --window 256 --states 2 --bars 12 --backend auto --pace-s 12 --lead-s 30 \
        --out "$OUT/round-one-$NAME-$2-$TAG.json" | grep -E "warm round|model |checkpoint ")
}
one "$BASE" base-1
one "$HEAD" head-1
one "$HEAD" head-2
one "$BASE" base-2
