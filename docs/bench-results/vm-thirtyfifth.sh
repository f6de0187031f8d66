#!/bin/sh
# The thirty-fifth session on this VM: `bench round --backend auto` (lavapipe) at the
# trial shape, and at the embedded default's, for each of two trees, alternated twice
# (the second time in the other order). Usage, from the repository root with the venv's
# python first on PATH, as an absolute path (each run starts in its tree):
#   [BARS=N] PATH=$PWD/.venv/bin:$PATH sh docs/bench-results/vm-thirtyfifth.sh NAME BASE HEAD \
#       [trial|default|both]
# NAME tags the raw files (round-NAME-{trial,default}-{1,2}-auto-TREE-TAG.json), BASE and
# HEAD are `git archive` trees of the commits compared; BARS the trial's bars (default 6).
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtyfifth-$(date +%F)
NAME=$1
BASE=$2
HEAD=$3
WHICH=${4:-both}
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars ${BARS:-6} --pace-s 20 --lead-s 45"
runs=""
case $WHICH in trial|both) runs="trial-1:$HEAD trial-1:$BASE trial-2:$BASE trial-2:$HEAD" ;; esac
case $WHICH in default|both) runs="$runs default-1:$HEAD default-1:$BASE default-2:$BASE default-2:$HEAD" ;; esac
for run in $runs; do
    name=${run%%:*}
    tree=${run#*:}
    flags=$TRIAL
    case $name in default*) flags=$DEFAULT ;; esac
    abs=$(cd "$tree" && pwd)
    base=$(basename "$tree")
    out=$R/round-$NAME-$name-auto-$base-$TAG.json
    # shellcheck disable=SC2086 # the flags split into words
    (cd "$abs" && PYTHONPATH=$abs python -m service.cli bench round $flags --backend auto \
        --out "$out") | grep -E "warm round|between bars|at risk" | sed "s/^/$name $base: /"
    python -c "
import json, sys
d = json.load(open(sys.argv[1]))
parts = {k: v['p50'] for k, v in d['model_parts_ms'].items()}
print(sys.argv[2], 'model p50', d['stages_ms']['model']['p50'], 'parts p50', parts)
" "$out" "$name $base"
done
