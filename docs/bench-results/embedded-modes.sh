#!/bin/sh
# The embedded default as shipped (numpy, two accounts of 8 instruments, paced at 2 s a
# bar), `regime-trader run --stop-after 10`, with [model] sample_between_bars = false (the
# sampler at the bar) and as shipped (auto: on, numpy being a CPU), one after the other,
# each with a fresh state folder (thirty-first session). From the repository root with
# the venv's regime-trader first on PATH; keeps each run's update.completed and
# model.sampled lines beside this script and prints the warm updates' duration.
set -eu
R=docs/bench-results
TAG=dev2c-epyc-thirtyfirst-2026-12-04
work=$(mktemp -d)
cp service/defaults/service.toml service/defaults/instruments.toml "$work/"
sed 's/^backend = "numpy"$/backend = "numpy"\nsample_between_bars = false/' \
    "$work/service.toml" >"$work/service-atbar.toml"
for mode in atbar auto; do
    config=$work/service.toml
    [ "$mode" = atbar ] && config=$work/service-atbar.toml
    regime-trader run --config "$config" --state-dir "$work/state-$mode" --stop-after 10 \
        2>&1 | grep -E '"event": "(update.completed|model.sampled)"' >"$R/embedded-$mode-$TAG.jsonl"
    python3 -c "
import json, statistics, sys
ups = [json.loads(l) for l in open(sys.argv[1])]
ups = [e for e in ups if e['event'] == 'update.completed' and e['seq'] > 1]
d = [e['duration_ms'] for e in ups]
print(sys.argv[2], 'warm updates', len(d), 'p50', round(statistics.median(d), 1), 'max',
      round(max(d), 1), 'sampled at the bar', sum(e['model'].get('sampled_at_bar', e['modelled']) for e in ups), 'of', sum(e['modelled'] for e in ups))
" "$R/embedded-$mode-$TAG.jsonl" "$mode"
done
rm -rf "$work"
