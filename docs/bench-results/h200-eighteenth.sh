#!/bin/sh
# The eighteenth session's H200 call (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/: base18 (8e984d9, the session's start) and
# head18 (ae083d1: the checkpoint's windows and checksums from the returns table, the
# positions as columns, DecisionRow a NamedTuple); a command runs inside its tree.
# `one`: `bench stages` (12 warm updates) at 268 instruments, head and base alternated
# twice; `checkpoint_parts.py` (where the checkpoint stage's time goes) at 268, alternated
# twice; `bench stages` at 54 once each; `bench model --shape trial` and `bench round` at
# the trial shape on wgpu at head.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np, scratch/trees/{base18,head18}.
set -u
ROOT=$(pwd)
SESSION=eighteenth
TAG=eighteenth-2026-12-03
HEAD=scratch/trees/head18
BASE=scratch/trees/base18
. "$(dirname "$0")/h200-lib.sh"

parts() {  # parts TREE NAME: checkpoint_parts.py at 268 instruments
    in_tree "$1" step "parts-$2" 120 python3 "$ROOT/docs/bench-results/checkpoint_parts.py"
    cp "$LOGS/parts-$2.log" "$OUT/checkpoint-parts-h200-268-$2-$TAG.txt"
}

case ${1:?one} in
one)
    stages $HEAD head 268; stages $BASE base 268; stages $BASE base-2 268; stages $HEAD head-2 268
    parts $HEAD head; parts $BASE base; parts $BASE base-2; parts $HEAD head-2
    stages $HEAD head 54; stages $BASE base 54
    model $HEAD head
    round $HEAD head wgpu 12 3
    bundle one
    ;;
esac
