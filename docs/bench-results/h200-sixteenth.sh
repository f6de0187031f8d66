#!/bin/sh
# The sixteenth session's H200 calls (issue 14), 2026-12-03. Each tree is a `git archive`
# of the packages carried under scratch/trees/: base (e1ed4f2, where the fourteenth
# session's measurements ended) and head (the commit measured); a command runs inside its
# tree (`python -m` puts the working folder first on sys.path).
# `one` (head fc90d89: the book as columns in the checkpoint, the orders as one batch to
# the simulated broker, the strategy's rows from columns): verify-gpu --quick and `bench
# digest` at head; `bench stages` (12 warm updates) at 268 instruments, head and base
# alternated twice, and at 54 once each; `bench round` at the trial shape on wgpu, head
# then base. `two` (the same head): `bench model --shape trial` (ESS/s), then `bench round`
# on wgpu and on numpy at head (the ratio in one call).
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np, scratch/trees/{base,head}.
set -u
OUT=${OUT:?set OUT to the folder for the results}
FINAL=$(cd "$OUT" && pwd)
OUT=/tmp/h200-sixteenth-results  # brought back as one archive: a call returns a few files
LOGS=/tmp/h200-sixteenth-logs
TAG=sixteenth-2026-12-03
CALLS=h200-sixteenth
HEAD=scratch/trees/head
BASE=scratch/trees/base
. "$(dirname "$0")/h200-lib.sh"  # in_tree, stages, round, bundle, verify_digest
case ${1:?one or two} in
one)
    verify_digest $HEAD
    stages $HEAD head 268; stages $BASE base 268; stages $HEAD head-2 268; stages $BASE base-2 268
    stages $HEAD head 54; stages $BASE base 54
    round $HEAD head wgpu 12 3
    round $BASE base wgpu 12 3
    bundle one
    ;;
two)
    in_tree $HEAD step model 150 python3 -m service.cli bench model --shape trial \
        --backend wgpu --out "$OUT/model-trial-h200-wgpu-$TAG.json"
    round $HEAD head-2 wgpu 12 3
    round $HEAD head-2 numpy 5 40
    bundle two
    ;;
esac
