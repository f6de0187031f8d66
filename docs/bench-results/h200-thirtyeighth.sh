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
log_events() {  # log_events NAME TREE: what one log event costs a worker of TREE, forwarded
    in_tree "$2" step "log-events-$1" 60 python3 "$ROOT/docs/bench-results/log_event_cost.py" \
        forward
    sed "s/^/$1 /" "$LOGS/log-events-$1.log" >>"$OUT/summary.txt"
}
one_268() {  # one_268 NAME TREE: the daemon with one account of 268 instruments
    in_tree "$2" step "round-268-one-$1" 300 python3 -m service.cli bench round --accounts 1 \
        --instruments 268 --chains 4 --window 256 --states 2 --bars 10 --pace-s 3 \
        --lead-s 25 --backend wgpu --out "$OUT/round-h200-wgpu-one-268-$1-$TAG.json"
}
if [ "${1:-one}" = five ]; then
    # The fifth call: an order event's plain values sent as they are (no copy through
    # JSON) as well as queued, against head38: what one event costs, then one account of
    # 268 instruments in the daemon, each tree once.
    for rep in 1 2 3; do
        log_events "new38e-$rep" "$ROOT"
        log_events "head38-$rep" "$TREES/head38"
    done
    bundle five
    one_268 new38e-4 "$ROOT"
    bundle five
    one_268 head38-4 "$TREES/head38"
    bundle five
    exit 0
fi
if [ "${1:-one}" = four ]; then
    # The fourth call: the worker's log events queued and sent by a thread (heartbeat.py)
    # against head38's send per event: what one event costs, and one account of 268
    # instruments in the daemon, each tree twice, alternated.
    for rep in 1 2; do
        log_events "new38-$rep" "$ROOT"
        log_events "head38-$rep" "$TREES/head38"
    done
    for rep in 2 3; do
        one_268 "new38-$rep" "$ROOT"
        bundle four
        one_268 "head38-$rep" "$TREES/head38"
        bundle four
    done
    exit 0
fi
if [ "${1:-one}" = three ]; then
    # The third call: item 4 in the daemon itself, one account of 268 instruments (its
    # orders stage pays the worker's log events, which bench stages captures in memory),
    # and what one log event costs a worker on this host.
    one_268 new38 "$ROOT"
    for mode in forward plain forward plain; do
        step "log-events-$mode" 60 python3 "$ROOT/docs/bench-results/log_event_cost.py" "$mode"
        cat "$LOGS/log-events-$mode.log" >>"$OUT/summary.txt"
    done
    bundle three
    exit 0
fi
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
