#!/bin/sh
# The nineteenth session's H200 calls (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/; a command runs inside its tree.
# `one`: what the eighteenth session's last two model commits (the returns' scales once
# per update, a batch's carries checked at once) did on the H200, where its device time
# ran out before they could be measured: runon_blocks.py at 268 instruments (12 warm
# updates) at head19 (ae504ad) and head18 (4c90d79, before them), alternated twice; at 54
# once at head19; `bench model --shape trial` at both; the trial round at head19.
# `two` (new19 = 2ad6dcf): the session's model commits (the gate's bulk ESS alone with
# the decision R-hat deferred, the deferred diagnostics' shares picked on the pool's
# threads) against head19: runon_blocks.py at 268 alternated twice and at 54 once each; `bench model
# --shape trial` alternated twice; the trial round at new19; verify-gpu --quick and the
# golden digest at new19; runon_blocks.py at 268 under cProfile at new19 (where the host
# time goes now). (Call two ran with head19's results named as call one's; they were
# renamed head19-two on arrival, the names this script now gives them.)
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np and the trees named below.
set -u
ROOT=$(pwd)
SESSION=nineteenth
TAG=nineteenth-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

runon() {  # runon TREE NAME N: runon_blocks.py at N instruments, 12 warm updates
    in_tree "$1" step "runon-$2-$3" 150 python3 "$ROOT/docs/bench-results/runon_blocks.py" \
        "$3" wgpu 12
    grep '^{' "$LOGS/runon-$2-$3.log" >"$OUT/runon-blocks-h200-$3-$2-$TAG.jsonl"
}

case ${1:?one or two} in
one)
    H19=scratch/trees/head19
    H18=scratch/trees/head18
    runon $H19 head19 268; runon $H18 head18 268; runon $H18 head18-2 268
    runon $H19 head19-2 268; runon $H19 head19 54
    model $H19 head19; model $H18 head18
    round $H19 head19 wgpu 12 3
    bundle one
    ;;
two)
    H19=scratch/trees/head19
    N19=scratch/trees/new19
    runon $N19 new19 268; runon $H19 head19-two 268; runon $H19 head19-two-2 268
    runon $N19 new19-2 268; runon $N19 new19 54; runon $H19 head19-two 54
    model $N19 new19; model $H19 head19-two; model $H19 head19-two-2; model $N19 new19-2
    round $N19 new19 wgpu 12 3
    verify_digest $N19
    PROFILE="$OUT/runon-profile-h200-268-new19-$TAG.txt" runon $N19 new19-profiled 268
    bundle two
    ;;
esac
