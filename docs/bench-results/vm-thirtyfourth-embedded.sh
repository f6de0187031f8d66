#!/bin/sh
# The embedded default as shipped (numpy) with the instruments at risk of the gate run on
# between bars (thirty-fourth session): `run --stop-after 10` from each tree with a fresh
# state folder, STEP (a `git archive` tree of d786481) and RISK (a tree of the at-risk
# commit or later), alternated twice. Usage, from the repository root with the venv's
# python first on PATH:
#   sh docs/bench-results/vm-thirtyfourth-embedded.sh scratch/trees/step34 scratch/trees/risk34
set -eu
R=$(pwd)/docs/bench-results
TAG=dev2c-epyc-thirtyfourth-2026-12-05
work=$(mktemp -d)
cp service/defaults/service.toml service/defaults/instruments.toml "$work/"
for round in 1 2; do
    for tree in "$1" "$2"; do
        name=$(basename "$tree")
        abs=$(cd "$tree" && pwd)
        kept=$R/embedded-at-risk-$name-$round-$TAG.jsonl
        (cd "$abs" && PYTHONPATH=$abs python -m service.cli run --config "$work/service.toml" \
            --state-dir "$work/state-$name-$round" --stop-after 10 2>&1) \
            | grep -E '"event": "(update.completed|model.sampled)"' >"$kept"
        python -c "
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ups = [e for e in lines if e['event'] == 'update.completed' and e['seq'] > 1]
sam = [e for e in lines if e['event'] == 'model.sampled']
d = [e['duration_ms'] for e in ups]
print(sys.argv[2], 'warm updates', len(d), 'p50', round(statistics.median(d), 1), 'max',
      round(max(d), 1), 'sent by the gate', sum(e['model'].get('at_bar_gate', 0) for e in ups),
      'sampler between bars p50', round(statistics.median(e['duration_ms'] for e in sam), 1),
      'max', round(max(e['duration_ms'] for e in sam), 1),
      'at risk', sum(e.get('at_risk', 0) for e in sam))
" "$kept" "$name-$round"
    done
done
rm -rf "$work"
