#!/bin/sh
# The device call of the thirty-eighth session (issue 14, item 4), 2026-12-05: what the
# wgpu chains' carries stored as float32 (21c27c8) buy where the checkpoint's sync is
# dear. `bench stages` at 268 instruments on wgpu (stages_backend.py), this tree against
# head38 (a `git archive` of aa31c77, the session's start, carried as
# scratch/trees/head38), alternated; the stage with the WAL never synced and a 4 KB fsync
# alone; the trial round of both trees. Set-up as in h200-thirtyfifth.sh, carrying .gl,
# .whl, .whl-np and scratch/trees/head38; each step's results bundled after it.
set -u
ROOT=$(pwd)
SESSION=thirtyeighth
. "$(dirname "$0")/h200-lib.sh"  # TAG, TREES and the steps
if [ "${1:-one}" = two ]; then
    # The second call: the first's stages moved by half between its two repetitions (the
    # host's speed, not the trees); three more of each with 30 warm updates, and this tree
    # with its updates 250 ms apart (as the daemon's bars, a pace apart) between them.
    for rep in 3 4 5; do
        stages_on "$ROOT" "new38-$rep" 268 wgpu 30
        stages_on "$TREES/head38" "head38-$rep" 268 wgpu 30
        stages_on "$ROOT" "new38-paced-$rep" 268 wgpu 30 250
        bundle two
    done
    exit 0
fi
stages_on "$ROOT" new38-1 268 wgpu
stages_on "$TREES/head38" head38-1 268 wgpu
stages_on "$ROOT" new38-2 268 wgpu
stages_on "$TREES/head38" head38-2 268 wgpu
bundle one
step stages-nosync-268-wgpu 150 python3 "$ROOT/docs/bench-results/stages_nosync.py" bench stages \
    --instruments 268 --window 256 --updates 12 --backend wgpu \
    --out "$OUT/stages-h200-268-wgpu-nosync-new38-$TAG.json"
step fsync 60 python3 "$ROOT/docs/bench-results/fsync_time.py" /tmp 200
grep '^{' "$LOGS/fsync.log" >>"$OUT/summary.txt"
bundle one
round "$ROOT" new38-1 wgpu 12 3
bundle one
round "$TREES/head38" head38-1 wgpu 12 3
bundle one
