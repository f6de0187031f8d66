#!/bin/sh
# The fortieth session's trees in the daemon on this VM (issue 14, item 4): one account of
# N instruments on wgpu (lavapipe), 8 bars, with the part timers of
# daemon_parts/sitecustomize.py in its worker, trees alternated.
# `PATH=/work/main/.venv/bin:$PATH sh docs/bench-results/vm-fortieth-parts.sh N REPS TREE...`
# (each TREE a checkout or `git archive`; its folder's name labels its results):
# docs/bench-results/daemon-parts-N-dev2c-epyc-NAME-REP-fortieth-DATE.txt, the round's
# figures and the parts' medians.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/alternate.sh"
N=$1
parts() {  # parts TREE REP
    name=$(basename "$1") folder=$(mktemp -d)
    out="$HERE/daemon-parts-$N-dev2c-epyc-$name-$2-fortieth-$(date +%Y-%m-%d).txt"
    (cd "$1" && RT_PARTS_OUT=$folder PYTHONPATH="$HERE/daemon_parts:$1" python -m service.cli \
        bench round --accounts 1 --instruments "$N" --bars 8 --backend wgpu) >"$out" 2>&1
    echo "== parts (python docs/bench-results/daemon_parts/summary.py)" >>"$out"
    python "$HERE/daemon_parts/summary.py" "$folder" >>"$out"
    rm -rf "$folder"
    grep -E "warm round|checkpoint p50|^checkpoint|COMMIT|carries encoded|stacked carries" \
        "$out" | sed "s/^/$name-$2: /"
}
reps=$2
shift 2
alternate "$reps" parts "$@"
