#!/bin/sh
# The fourteenth session's H200 calls (issue 14), 2026-12-02. Each tree is a `git archive`
# of the packages carried under scratch/trees/: base (a988fd6, the session's start) and
# head (the commit measured); a command runs inside its tree (`python -m` puts the
# working folder first on sys.path, so PYTHONPATH alone would not pick the tree).
# `one`: verify-gpu --quick and `bench digest` at head; `bench stages` (12 warm updates)
# at 268 instruments, head and base alternated twice, and at 54 once each; `bench round`
# at the trial shape on wgpu, head then base; `bench model --shape trial` at head.
# `two`: `bench stages` at 268 and 54 (head), `bench model --shape trial` at 348fec9 (the
# commit `one` measured) and head alternated twice, `bench round` on wgpu then numpy at
# head (the ratio in one call), and a warm update's device time at 800 to 4,224 lanes
# (lanes_latency.py: where a second wave of workgroups begins). `three`: after the
# window-sized scan kernels, verify-gpu --quick, lanes_latency.py, `bench model --shape
# trial` and `bench round` on wgpu, then the round at 2fca5e1 (the commit before).
# Set-up as in h200-model.sh, carrying .gl, .whl, .whl-np, scratch/trees/{base,head}.
set -u
OUT=${OUT:?set OUT to the folder for the results}
OUT=$(cd "$OUT" && pwd)
FINAL=$OUT
LOGS=/tmp/h200-fourteenth-logs
TAG=fourteenth-2026-12-02
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
HEAD=scratch/trees/head
BASE=scratch/trees/base
ONE=scratch/trees/one  # `two`: the commit `one` measured (348fec9)
PREV=scratch/trees/prev14  # `three`: 2fca5e1
mkdir -p "$LOGS"
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
    in_tree "$1" step "round-$2-$3" 300 python3 -m service.cli bench round $TRIAL \
        --backend "$3" --bars "$4" --pace-s "$5" --lead-s 25 \
        --out "$OUT/round-h200-$3-$2-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-$2-$3.log" | sed "s/^/$2 $3: /" \
        >>"$OUT/summary.txt"
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
    in_tree $HEAD step model 150 python3 -m service.cli bench model --shape trial \
        --backend wgpu --out "$OUT/model-trial-h200-wgpu-$TAG.json"
    ;;
two)  # results in one archive (a call brings back a few files only)
    OUT=/tmp/h200-fourteenth-two
    mkdir -p "$OUT"
    stages $HEAD head-3 268; stages $HEAD head-3 54
    for n in 1 2; do
        in_tree $ONE step "model-one-$n" 100 python3 -m service.cli bench model \
            --shape trial --backend wgpu --out "$OUT/model-trial-h200-wgpu-one-$n-$TAG.json"
        in_tree $HEAD step "model-head-$n" 100 python3 -m service.cli bench model \
            --shape trial --backend wgpu --out "$OUT/model-trial-h200-wgpu-head-$n-$TAG.json"
    done
    round $HEAD head-2 wgpu 12 3
    round $HEAD head-2 numpy 5 40
    in_tree $HEAD step lanes 150 python3 docs/bench-results/lanes_latency.py 200:4 264:4 \
        268:4 396:4 528:4 792:4 1056:4
    grep '^{' "$LOGS/lanes.log" >"$OUT/lanes-latency-h200-$TAG.jsonl"
    cp "$OUT/summary.txt" "$FINAL/summary.txt"
    tar -czf "$FINAL/h200-fourteenth-two.tgz" -C "$OUT" .
    ;;
three)  # after the window-sized scan kernels (0f82fdf); PREV: 2fca5e1, the commit before
    in_tree $HEAD step verify-3 150 python3 -m service.cli verify-gpu --quick \
        --out "$OUT/verify-h200-3-$TAG.json"
    tail -4 "$LOGS/verify-3.log" >>"$OUT/summary.txt"
    in_tree $HEAD step lanes-3 150 python3 docs/bench-results/lanes_latency.py 54:4 19:32 \
        200:4 264:4 528:4
    grep '^{' "$LOGS/lanes-3.log" >"$OUT/lanes-latency-h200-3-$TAG.jsonl"
    in_tree $HEAD step model-3 100 python3 -m service.cli bench model --shape trial \
        --backend wgpu --out "$OUT/model-trial-h200-wgpu-3-$TAG.json"
    round $HEAD head-3 wgpu 12 3
    round $PREV prev wgpu 12 3
    ;;
esac
