#!/bin/sh
# `bench stages` at 268 instruments, alternated between trees (thirty-seventh session,
# issue 14 item 4): PATH=/work/main/.venv/bin:$PATH sh docs/bench-results/vm-thirtyseventh-stages.sh
# NAME REPS TREE... writes stages-dev2c-epyc-268-<tree>-<rep>-NAME.json here and prints
# each run's warm p50/p99 of the four host stages (and the WAL's copy after the bar).
set -u
here=$(cd "$(dirname "$0")" && pwd)
name=$1 reps=$2
shift 2
for rep in $(seq "$reps"); do
    for tree in "$@"; do
        out=$here/stages-dev2c-epyc-268-$(basename "$tree")-$rep-$name.json
        (cd "$tree" && PYTHONPATH=$tree python -m service.cli bench stages --instruments 268 \
            --window 256 --updates 12 --out "$out" >/dev/null 2>&1) || exit
        python -c "import json,sys;d=json.load(open(sys.argv[1]));w=d['warm_ms'];print(sys.argv[2], ' '.join('%s %.2f/%.2f'%(k,w[k]['p50'],w[k]['p99']) for k in ('fetch','strategy','checkpoint','orders')), d.get('after_bar_ms',''))" "$out" "$(basename "$tree")-$rep"
    done
done
