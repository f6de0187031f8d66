#!/bin/sh
# The thirty-fourth session's third change on this VM: between bars, the instruments at
# risk of the gate at the next bar (its reweighing probed at the predictive's 5, 25, 50, 75 and 95 %
# returns, regime_model.reweigh.at_risk) run on to 0.6 of it there, so that the bar seldom
# sends one to its sampler. STEP (a `git archive` tree of d786481, the step alone) against
# RISK (a tree of the change). Usage, from the repository root with the venv's python
# first on PATH:
#   sh docs/bench-results/vm-thirtyfourth-risk.sh scratch/trees/step34 scratch/trees/risk34
# `bench round --backend auto` (lavapipe), the trial shape, alternated twice (the second
# time in the other order), and the embedded default's shape twice each.
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtyfourth-2026-12-05
STEP=$1
RISK=$2
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45"
for run in "trial-1 $RISK" "trial-1 $STEP" "trial-2 $STEP" "trial-2 $RISK" \
           "default-1 $RISK" "default-1 $STEP" "default-2 $STEP" "default-2 $RISK"; do
    name=${run%% *}
    tree=${run#* }
    flags=$TRIAL
    case $name in default*) flags=$DEFAULT ;; esac
    abs=$(cd "$tree" && pwd)
    base=$(basename "$tree")
    out=$R/round-risk-$name-auto-$base-$TAG.json
    # shellcheck disable=SC2086 # the flags split into words
    (cd "$abs" && PYTHONPATH=$abs python -m service.cli bench round $flags --backend auto \
        --out "$out") | grep -E "warm round|between bars" | sed "s/^/$name $base: /"
    python -c "
import json, sys
d = json.load(open(sys.argv[1]))
parts = {k: v['p50'] for k, v in d['model_parts_ms'].items()}
print(sys.argv[2], 'model p50', d['stages_ms']['model']['p50'], 'parts p50', parts)
" "$out" "$name $base"
done
