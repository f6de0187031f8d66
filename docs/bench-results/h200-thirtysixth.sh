#!/bin/sh
# The H200 call of the thirty-sixth session (issue 14), 2026-12-05: the device came late
# (six tries got no machine), so the thirty-fifth session's two calls shrink to one: the
# trial round here (e6f16c9: the bar's reweighing by one step, the instruments at risk
# run on between bars by their worst of seven probes, a cold start's too) against base34
# (a `git archive` of d5f2c87, the tree the thirty-third session's H200 figures ran in,
# before any of these), alternated, here at a margin of 0.6 once and base35 (of ae20b69:
# the step and the run-on to 0.6 of the gate alone) once; and item 4's checkpoint stage
# with and without the WAL's fsync, and the host's fsync alone.
# Set-up as in h200-thirtyfifth.sh, carrying .gl, .whl, .whl-np and scratch/trees/{base34,base35}.
set -u
ROOT=$(pwd)
SESSION=${SESSION:-thirtysixth}  # the thirty-seventh session ran `two` as its own
TAG=$SESSION-$(date +%Y-%m-%d)  # the day it runs
. "$(dirname "$0")/h200-lib.sh"
TREES=$ROOT/scratch/trees
if [ "${1:-one}" = two ]; then
    # The second call, if device time is left: the checkpoint's carries stacked by shape
    # and the bar's reweighing of the last sample whole (this tree) against head36 (a
    # `git archive` of e42c020, the first call's tree, carried as scratch/trees/head36);
    # then item 4 at 268.
    round "$ROOT" "new36-1" wgpu 12 3
    bundle two
    round "$TREES/head36" "head36-3" wgpu 12 3
    bundle two
    stages "$ROOT" new36 54
    bundle two
    # item 4 at 268 instruments per account, where it is not met: the stages, and where
    # the checkpoint's time goes on this host (its sync against its encoding and SQL)
    stages "$ROOT" new36 268
    checkpoint_where "$ROOT" 268 new36
    bundle two
    exit 0
fi
# In order of need, the results bundled after each step so that a call cut short still
# brings back what ran: the alternated pair, item 4's checkpoint stage as shipped and with
# the WAL never synced (stages_nosync.py) and the host's fsync of 4 KB alone
# (fsync_time.py), the second pair, then margin 0.6 and base35.
round "$ROOT" "head36-1" wgpu 12 3
round "$TREES/base34" "base34-1" wgpu 12 3
bundle one
stages "$ROOT" head36 54
in_tree "$ROOT" step "stages-nosync-54" 120 python3 "$ROOT/docs/bench-results/stages_nosync.py" \
    bench stages --instruments 54 --window 256 --updates 12 --out "$OUT/stages-h200-54-nosync36-$TAG.json"
step "fsync" 60 python3 "$ROOT/docs/bench-results/fsync_time.py" /tmp 200
grep '^{' "$LOGS/fsync.log" >>"$OUT/summary.txt"
bundle one
round "$TREES/base34" "base34-2" wgpu 12 3
round "$ROOT" "head36-2" wgpu 12 3
bundle one
round "$ROOT" "margin06-36" wgpu 12 3 --between-bars-margin 0.6
bundle one
round "$TREES/base35" "base35-1" wgpu 12 3
bundle one
