#!/bin/sh
# `sh docs/bench-results/bar_pass_trees.sh ROUNDS TREE...` (thirty-first session): the bar's
# pass over a trial account's 28,800 draws (bar_pass_cost.py wgpu 15 1) in each tree in
# turn, ROUNDS times: one line per tree and operation, "TREE OP MEDIAN_MS MIN_MS". The
# trees are `git archive` trees of the commits compared (scratch/trees/NAME).
set -eu
ROOT=$(pwd)
rounds=$1
shift
for n in $(seq "$rounds"); do
    for tree in "$@"; do
        (cd "$tree" && PYTHONPATH=$(pwd) python3 "$ROOT/docs/bench-results/bar_pass_cost.py" wgpu 15 1 2>/dev/null) \
            | grep '^{' | python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print('$(basename "$tree")', d['op'], d['median_ms'], d['min_ms'])"
    done
done
