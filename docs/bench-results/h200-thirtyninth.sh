#!/bin/sh
# The device call of the thirty-ninth session (issue 14, item 4), 2026-12-05: the daemon
# itself at 268 instruments an account, one account, with part timers in its worker
# (daemon_parts/sitecustomize.py, RT_PARTS_OUT), this tree against head39 (a `git archive`
# of 4f68c53, the session's start, carried as scratch/trees/head39), alternated: the
# `regime.changed` lines logged after the orders (5d9a986) and the carries stacked after
# the sampler between bars (the commit after it). Then the trial round of this tree, the
# issue's H200 figures. Set-up as in h200-thirtyfifth.sh, carrying .gl, .whl, .whl-np and
# scratch/trees/head39; each step's results bundled after it.
set -u
ROOT=$(pwd)
SESSION=thirtyninth
. "$(dirname "$0")/h200-lib.sh"  # TAG, TREES and the steps
if [ "${1:-one}" = four ]; then
    # The fourth call: the final tree (new39c: secure_delete FAST as well) against head39,
    # the daemon with one account of 268, once each.
    parts_pair new39c-1 head39-c1 "$TREES/head39" four
    exit 0
fi
if [ "${1:-one}" = three ]; then
    # The third call: the checkpoint once retention prunes with each update, SQLite's
    # secure_delete on (Debian's default) against FAST (the store's from this session),
    # alternated (steady_state_wal.py: bench stages' rig at 268, retention 3).
    for rep in 1 2 3; do
        for mode in on fast; do
            step "steady-$mode-$rep" 120 python3 "$ROOT/docs/bench-results/steady_state_wal.py" \
                "$mode" 3
            cat "$LOGS/steady-$mode-$rep.log" >>"$OUT/summary.txt"
        done
    done
    bundle three
    exit 0
fi
if [ "${1:-one}" = two ]; then
    # The second call: the final tree (the warming entry's empty case found in C first,
    # dfdee89, as well; new39b) against head39 again, then its trial round.
    for rep in 1 2; do
        parts_pair "new39b-$rep" "head39-b$rep" "$TREES/head39" two
    done
    round "$ROOT" new39b-1 wgpu 12 3
    bundle two
    exit 0
fi
for rep in 1 2; do
    parts_pair "new39-$rep" "head39-$rep" "$TREES/head39" one
done
round "$ROOT" new39-1 wgpu 12 3
bundle one
