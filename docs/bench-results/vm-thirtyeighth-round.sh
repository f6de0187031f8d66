#!/bin/sh
# One trial account's round on the wgpu backend, alternated between trees, with what its
# checkpoints hold (thirty-eighth session, issue 14 item 4):
# PATH=/work/main/.venv/bin:$PATH sh docs/bench-results/vm-thirtyeighth-round.sh NAME REPS TREE...
# writes round-dev2c-epyc-wgpu-<tree>-<rep>-NAME.json here and prints each run's host
# stages (p50/p99) and round_blobs.py's report of its last checkpoint.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/alternate.sh"
name=$1 reps=$2
shift 2
one() {  # one TREE REP
    out=$here/round-dev2c-epyc-wgpu-$(basename "$1")-$2-$name.json
    echo "== $(basename "$1")-$2"
    (cd "$1" && PYTHONPATH=$1 python "$here/round_blobs.py" bench round --accounts 1 \
        --instruments 54 --chains 4 --window 256 --states 2 --bars 10 --pace-s 3 \
        --backend wgpu --out "$out" 2>/dev/null) || return
    python -c "import json,sys;d=json.load(open(sys.argv[1]));s=d['stages_ms'];print('warm p50 %.1f'%d['round_ms']['warm']['p50'], ' '.join('%s %.2f/%.2f'%(k,s[k]['p50'],s[k]['p99']) for k in ('fetch','strategy','checkpoint','orders')))" "$out"
}
alternate "$reps" one "$@"
