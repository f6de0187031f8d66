#!/bin/sh
# The twenty-first session's H200 call (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/; a command runs inside its tree.
# `one` and `two` (new21: the ESS capped at the draw count; head21 = bd71a21, before it):
# verify-gpu --quick and the golden digest at new21; `bench model --shape trial` at new21
# and head21 alternated; ess_calibration.py at 64 instruments (4 x 40 on three series, and
# 4 x 400 on one); ess_per_draw.py at 268 (4 x 40, 400, 1,000: what the short chains' ESS
# is worth, for the NumPyro figure); runon_blocks.py at 268 with the deferred diagnostics
# on their threads and at the update's end, alternated twice (do their threads slow the
# update's host work?), and replay_host.py compare at 268 (the same question with the
# device runs replayed); the trial round at new21. `three`: the trial round on wgpu and
# then on numpy at new21 (the issue's ratio in one call).
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and the trees named below.
set -u
ROOT=$(pwd)
SESSION=twentyfirst
TAG=twentyfirst-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

script() {  # script TREE NAME LIMIT SCRIPT ARGS...: a bench script's JSON lines
    tree=$1 name=$2 limit=$3 file=$4
    shift 4
    in_tree "$tree" step "$name" "$limit" python3 "$ROOT/docs/bench-results/$file" "$@"
    grep '^{' "$LOGS/$name.log" >"$OUT/$name-h200-$TAG.jsonl"
}

blocks() {  # blocks TREE NAME MODE: runon_blocks.py at 268, diagnostics on threads or at-end
    DIAGNOSTICS=$3 script "$1" "runon-blocks-268-$2-$3" 150 runon_blocks.py 268 wgpu 12
}

case ${1:?one, two or three} in
one)
    N21=scratch/trees/new21
    H21=scratch/trees/head21
    verify_digest $N21
    model $N21 new21; model $H21 head21
    bundle one  # what has come so far, should the call run out of time
    script $N21 ess-calibration-64-40 200 ess_calibration.py 64 12 40 0 1 2
    bundle one
    script $N21 ess-per-draw-268 120 ess_per_draw.py 268 wgpu 40 400 1000
    script $N21 ess-calibration-64-400 150 ess_calibration.py 64 12 400 0
    bundle one
    ;;
two)
    N21=scratch/trees/new21
    H21=scratch/trees/head21
    blocks $N21 a threads; blocks $N21 a at-end; blocks $N21 b threads; blocks $N21 b at-end
    in_tree $N21 step replay-record-268 150 python3 \
        "$ROOT/docs/bench-results/replay_host.py" record 268 12
    script $N21 replay-compare-268 150 replay_host.py compare 268 12
    bundle two
    model $N21 new21-2; model $H21 head21-2
    bundle two
    round $N21 new21 wgpu 12 3
    bundle two
    ;;
three)  # the issue's wgpu / numpy ratio on the warm round, in one call, at new21
    N21=scratch/trees/new21
    round $N21 new21-three wgpu 12 3
    bundle three
    round $N21 new21-three numpy 5 40
    bundle three
    ;;
esac
