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
# on wgpu and on numpy at head (the ratio in one call). `three` (head: the checkpoint's
# returns packed per update): `bench stages` at 268 (alternated with base) and 54, and
# `bench round` on wgpu.
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np, scratch/trees/{base,head}.
set -u
OUT=${OUT:?set OUT to the folder for the results}
FINAL=$(cd "$OUT" && pwd)
OUT=/tmp/h200-sixteenth-results  # brought back as one archive: a call returns a few files
LOGS=/tmp/h200-sixteenth-logs
TAG=sixteenth-2026-12-03
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
HEAD=scratch/trees/head
BASE=scratch/trees/base
mkdir -p "$LOGS" "$OUT"
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
in_tree() {  # in_tree TREE COMMAND...: the command in the tree, its packages first
    tree=$1
    shift
    (cd "$tree" && PYTHONPATH=$(pwd):$PYTHONPATH "$@")
}
stages() {  # stages TREE NAME N: bench stages at N instruments
    in_tree "$1" step "stages-$2-$3" 120 python3 -m service.cli bench stages \
        --instruments "$3" --window 256 --updates 12 --out "$OUT/stages-h200-$3-$2-$TAG.json"
}
round() {  # round TREE NAME BACKEND BARS PACE_S
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    in_tree "$1" step "round-$2-$3" 330 python3 -m service.cli bench round $TRIAL \
        --backend "$3" --bars "$4" --pace-s "$5" --lead-s 25 \
        --out "$OUT/round-h200-$3-$2-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-$2-$3.log" | sed "s/^/$2 $3: /" \
        >>"$OUT/summary.txt"
}
bundle() {  # bundle NAME: the results in one archive, and the summary beside it
    tar -czf "$FINAL/h200-sixteenth-$1.tgz" -C "$OUT" . && cp "$OUT/summary.txt" "$FINAL/"
}
case ${1:?one or two} in
one)
    in_tree $HEAD step verify 150 python3 -m service.cli verify-gpu --quick \
        --out "$OUT/verify-h200-$TAG.json"
    tail -4 "$LOGS/verify.log" >>"$OUT/summary.txt"
    in_tree $HEAD step digest 120 python3 -m service.cli bench digest --json
    grep '^{' "$LOGS/digest.log" >"$OUT/digest-h200-$TAG.json"
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
three)
    stages $HEAD head-3 268; stages $BASE base-3 268; stages $HEAD head-4 268
    stages $BASE base-4 268; stages $HEAD head-3 54
    round $HEAD head-3 wgpu 12 3
    bundle three
    ;;
esac
