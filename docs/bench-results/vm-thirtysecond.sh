#!/bin/sh
# numpy's bar pass between bars as one forward filter (thirty-second session), on this VM:
# BASE (a `git archive` tree of 82ed7da, before it) against HEAD (a tree of the commit),
# alternated twice. Usage, from the repository root with the venv's python first on PATH:
#   sh docs/bench-results/vm-thirtysecond.sh scratch/trees/base32 scratch/trees/ff32
# 1. the reweighing alone (reweigh_time.py numpy 9), a trial account's 28,800 draws and an
#    embedded default account's 3,520;
# 2. the embedded default as shipped (numpy, sample_between_bars auto: on), `run
#    --stop-after 10` from each tree with a fresh state folder: the warm updates' duration
#    and the model stage's reweighing, from the update.completed lines kept beside this.
set -eu
R=docs/bench-results
TAG=dev2c-epyc-thirtysecond-2026-12-05
BASE=$1
HEAD=$2
out=$R/reweigh-time-numpy-$TAG.txt
: >"$out"
for round in 1 2; do
    for tree in "$BASE" "$HEAD"; do
        for shape in trial embedded; do
            extra=""
            [ "$shape" = embedded ] && extra=embedded
            printf '%s %s %s ' "$round" "$(basename "$tree")" "$shape" >>"$out"
            PYTHONPATH=$tree python "$R/reweigh_time.py" numpy 9 $extra >>"$out"
        done
    done
done
cat "$out"
work=$(mktemp -d)
cp service/defaults/service.toml service/defaults/instruments.toml "$work/"
for round in 1 2; do
    for tree in "$BASE" "$HEAD"; do
        name=$(basename "$tree")
        abs=$(cd "$tree" && pwd)
        kept=$R/embedded-shipped-$name-$round-$TAG.jsonl
        (cd "$abs" && PYTHONPATH=$abs python -m service.cli run --config "$work/service.toml" \
            --state-dir "$work/state-$name-$round" --stop-after 10 2>&1) \
            | grep -E '"event": "update.completed"' >"$kept"
        python -c "
import json, statistics, sys
ups = [json.loads(l) for l in open(sys.argv[1])]
ups = [e for e in ups if e['seq'] > 1]
d = [e['duration_ms'] for e in ups]
rw = [e['model']['reweigh'] for e in ups if e['model'].get('reweighed')]
print(sys.argv[2], 'warm updates', len(d), 'p50', round(statistics.median(d), 1), 'max',
      round(max(d), 1), 'reweigh p50', rw and round(statistics.median(rw), 1),
      'sampled at the bar', sum(e['model'].get('sampled_at_bar', e['modelled']) for e in ups),
      'of', sum(e['modelled'] for e in ups))
" "$kept" "$name-$round"
    done
done
rm -rf "$work"
