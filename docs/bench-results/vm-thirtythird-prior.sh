#!/bin/sh
# The log prior's value in closed form (regime_model.params.log_prior_value, thirty-third
# session), on this VM: a trial account's reweighing (reweigh_time.py BACKEND 21 profile:
# the median of 21 calls, then one under cProfile, whose log_prior_value line is its
# cumulative time) in BASE (a tree of the commit before) and HEAD (a tree of the commit),
# alternated twice, numpy and wgpu (lavapipe). Usage, from the repository root with the
# venv's python first on PATH:  sh docs/bench-results/vm-thirtythird-prior.sh BASE HEAD
set -eu
R=$(pwd)/docs/bench-results
OUT=$R/reweigh-time-prior33-dev2c-epyc-thirtythird-2026-12-05.txt
: >"$OUT"
for n in 1 2; do
    for tree in "$1" "$2"; do
        for backend in numpy wgpu; do
            (cd "$tree" && PYTHONPATH=$(pwd) python3 "$R/reweigh_time.py" "$backend" 21 profile) \
                | grep '^{' | sed "s|^|$(basename "$tree") $n: |" >>"$OUT"
        done
    done
done
python3 - "$OUT" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    head, body = line.split(": ", 1)
    d = json.loads(body)
    if "median_ms" in d:
        print(head, d["backend"], "median", d["median_ms"], end=" ")
    else:
        print("log_prior_value", [p[0] for p in d["profile_ms"] if "log_prior_value" in p[2]])
PY
