#!/bin/sh
# `bench stages` at 268 instruments on a chosen backend, alternated between trees
# (thirty-eighth session, issue 14 item 4):
# PATH=/work/main/.venv/bin:$PATH sh docs/bench-results/vm-thirtyeighth-stages.sh NAME REPS BACKEND TREE...
# writes stages-dev2c-epyc-268-BACKEND-<tree>-<rep>-NAME.json here (stages_backend.py) and
# prints each run's warm p50/p99 of the host stages, the checkpoint row's and the WAL's
# bytes per update.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/alternate.sh"
name=$1 reps=$2 backend=$3
shift 3
one() {  # one TREE REP
    out=$here/stages-dev2c-epyc-268-$backend-$(basename "$1")-$2-$name.json
    (cd "$1" && PYTHONPATH=$1 python "$here/stages_backend.py" 268 "$backend" "$out" \
        >/dev/null 2>&1) || return
    python -c "import json,sys;d=json.load(open(sys.argv[1]));w=d['warm_ms'];s=d['storage'];print(sys.argv[2], ' '.join('%s %.2f/%.2f'%(k,w[k]['p50'],w[k]['p99']) for k in ('reconcile','fetch','strategy','checkpoint','orders')), 'row %.0f wal %d'%(s['checkpoint_row_bytes'],s['wal_bytes_per_update']))" "$out" "$(basename "$1")-$2"
}
alternate "$reps" one "$@"
