#!/bin/sh
# Issue 15's regime-change measurement through [model] sample_between_bars (issue 14,
# thirty-first session): the warm path at the bar (atbar) and between bars (between), the
# same warm seeds against the same long references, which are reused (only the warm path
# runs). `sh docs/bench-results/regime-change-between-bars.sh` from the repository root
# with the venv's regime-trader first on PATH; results beside this script.
set -eu
R=docs/bench-results
TAG=dev2c-epyc-thirtyfirst-2026-12-04
rc() {  # rc NAME CSV FROM TO REFERENCES CHAINS WARM_SEED: both modes, at the bar first
    name=$1 csv=$2 from=$3 to=$4 refs=$5 chains=$6 seed=$7
    for mode in atbar between; do
        flag=""
        [ "$mode" = between ] && flag=--between-bars
        # shellcheck disable=SC2086 # flag is empty or one word
        regime-trader bench regime-change --csv "$csv" --column Close --from "$from" --to "$to" \
            --seed 7 --warm-seed "$seed" --reference-chains "$chains" --reference-draws 4000 \
            --reference-warmup 1000 --references "$R/$refs" $flag \
            --out "$R/regime-change-$name-$mode-seed$seed-$TAG.json"
        python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[2], \
d['abs_error'], 'unconverged', d['unconverged_fraction'], 'at the bar', \
d['sampled_at_bar_fraction'], d['seconds'], 's')" \
            "$R/regime-change-$name-$mode-seed$seed-$TAG.json" "$name $mode seed $seed"
    done
}
for seed in 7 8 9 10; do
    rc sp500-2008 tests/data/sp500.csv 2008-08-01 2008-10-31 \
        regime-change-sp500-2008-refs16x4000-move-before-dev2c-xeon-2026-12-02.json 16 "$seed"
done
rc nasdaq-2008 tests/data/nasdaq.csv 2008-08-01 2008-10-31 \
    regime-change-nasdaq-2008-refs8x4000-gate-dev2c-xeon-2026-12-02.json 8 7
rc sp500-2011 tests/data/sp500.csv 2011-07-15 2011-09-30 \
    regime-change-sp500-2011-refs8x4000-gate-dev2c-xeon-2026-12-02.json 8 7
mkdir -p /tmp/refs
regime-trader bench regime-change --write-synthetic /tmp/refs/synthetic.csv --seed 3 >/dev/null
rc synthetic /tmp/refs/synthetic.csv 2011-02-01 2011-04-01 \
    regime-change-synthetic-gate-seed7-dev2c-xeon-2026-12-02.json 16 7
