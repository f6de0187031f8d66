#!/bin/sh
# The thirty-fourth session's change on this VM: the bar's reweighing by one step from the
# filter the sample left between bars (regime_model.next_bar). BASE (a `git archive` tree
# of d5f2c87, the session's start) against HEAD (a tree of the change). Usage, from the
# repository root with the venv's python first on PATH:
#   sh docs/bench-results/vm-thirtyfourth.sh scratch/trees/base34 scratch/trees/step34
# 0. a trial account's reweighing alone on numpy (reweigh_time.py numpy 9 profile), and an
#    embedded default account's (embedded), alternated twice;
# 1. the embedded default as shipped (numpy), `run --stop-after 10` from each tree with a
#    fresh state folder, alternated twice: the warm updates, and the samplers between bars
#    (update.completed and model.sampled lines kept beside this);
# 2. `bench round --backend auto` (lavapipe), the daemon's default, the embedded default's
#    shape alternated twice, then the trial shape once each.
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtyfourth-2026-12-05
BASE=$1
HEAD=$2
for round in 1 2; do
    for tree in "$BASE" "$HEAD"; do
        name=$(basename "$tree")
        abs=$(cd "$tree" && pwd)
        for shape in trial embedded; do
            arg=$([ $shape = embedded ] && echo embedded || true)
            (cd "$abs" && PYTHONPATH=$abs python "$R/reweigh_time.py" numpy 9 profile $arg) \
                >"$R/reweigh-time-$shape-$name-$round-$TAG.jsonl"
            echo "$name-$round $shape: $(head -1 "$R/reweigh-time-$shape-$name-$round-$TAG.jsonl")"
        done
    done
done
work=$(mktemp -d)
cp service/defaults/service.toml service/defaults/instruments.toml "$work/"
for round in 1 2; do
    for tree in "$BASE" "$HEAD"; do
        name=$(basename "$tree")
        abs=$(cd "$tree" && pwd)
        kept=$R/embedded-shipped-$name-$round-$TAG.jsonl
        (cd "$abs" && PYTHONPATH=$abs python -m service.cli run --config "$work/service.toml" \
            --state-dir "$work/state-$name-$round" --stop-after 10 2>&1) \
            | grep -E '"event": "(update.completed|model.sampled)"' >"$kept"
        python -c "
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ups = [e for e in lines if e['event'] == 'update.completed' and e['seq'] > 1]
sam = [e['duration_ms'] for e in lines if e['event'] == 'model.sampled']
d = [e['duration_ms'] for e in ups]
print(sys.argv[2], 'warm updates', len(d), 'p50', round(statistics.median(d), 1), 'max',
      round(max(d), 1), 'sampled at the bar', sum(e['model'].get('sampled_at_bar', 0) for e in ups),
      'of', sum(e['modelled'] for e in ups), 'sampler between bars p50',
      round(statistics.median(sam), 1))
" "$kept" "$name-$round"
    done
done
rm -rf "$work"
DEFAULT="--accounts 2 --instruments 16 --chains 4 --window 256 --states 2 --bars 8 --pace-s 4 --lead-s 25"
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2 --bars 6 --pace-s 20 --lead-s 45"
for run in default-1 default-2 trial-1; do
    flags=$DEFAULT
    [ "$run" = trial-1 ] && flags=$TRIAL
    for tree in "$BASE" "$HEAD"; do
        name=$(basename "$tree")
        abs=$(cd "$tree" && pwd)
        # shellcheck disable=SC2086 # the flags split into words
        (cd "$abs" && PYTHONPATH=$abs python -m service.cli bench round $flags --backend auto \
            --out "$R/round-$run-auto-$name-$TAG.json") \
            | grep -E "warm round|between bars|overlapped" | sed "s/^/$run $name: /"
    done
done
