#!/bin/sh
# The twenty-fifth session's H200 calls (issue 14), 2026-12-04.
# `one`: several accounts' warm batches joined into one dispatch (batch_join, 2339d80):
# verify-gpu --quick (its joint check now joins the two accounts' runs) and the golden
# digest; account_join.py 5 54, 5 8 and 5 54 again, 12 repeats each. (In the call the
# script's account_join steps failed on a wide carry, mended in the script; the three
# runs were then made by hand in the same lease, one command as below.)
# `two`: the shared device ([model] shared_device, `bench round --shared-device`): the
# trial round with it and without, alternated twice; verify-gpu --quick.
# `three`: why the shared round was slower: the trial round with the shared device once
# more (its JSON now has the device process's figures: lanes, joined, run ms), and
# account_join.py at 5, 6, 8 and 10 accounts of 54 (does a joined run's time step with
# its lanes, as a second wave of workgroups would?).
# `four`: only a worker's first batch of a bar waits (2d626b3):
# the shared round twice around the round without it.
# `five`: where accounts under-fill the GPU: 5 accounts of 8 instruments (40 in all),
# with the shared device and without, alternated.
# `six`: what the wide lanes cost the trial round: the round at `[model] extension_chains`
# 16 (x16: a `git archive` tree of ef5c31e with that one default changed; carried as
# scratch/trees/x16) and at the daemon's 32, own device each.
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
ROOT=$(pwd)
SESSION=twentyfifth
TAG=twentyfifth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"

shared_round() {  # shared_round NAME: the trial round with the shared device
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    step "round-$1" 330 python3 -m service.cli bench round $TRIAL --backend wgpu --bars 12 \
        --pace-s 3 --lead-s 25 --shared-device --out "$OUT/round-h200-wgpu-$1-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-$1.log" | sed "s/^/$1: /" >>"$OUT/summary.txt"
}

small_round() {  # small_round NAME [--shared-device]: 5 accounts of 8 instruments
    step "round-$1" 330 python3 -m service.cli bench round --accounts 5 --instruments 40 \
        --chains 4 --window 256 --states 2 --backend wgpu --bars 12 --pace-s 3 --lead-s 25 \
        ${2:-} --out "$OUT/round-h200-wgpu-small-$1-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-$1.log" | sed "s/^/small $1: /" \
        >>"$OUT/summary.txt"
}

case ${1:?one, two, three, four, five or six} in
one)
    verify_digest "$ROOT"
    bundle one
    for shape in "5 54" "5 8" "5 54"; do
        python3 docs/bench-results/account_join.py $shape 12 2>/dev/null | grep '^{' \
            >>"$OUT/account-join-$(echo "$shape" | tr ' ' x)-h200-$TAG.jsonl"
    done
    bundle one
    ;;
two)
    for n in 1 2; do
        shared_round "shared-$n"
        bundle two
        round "$ROOT" "own-$n" wgpu 12 3
        bundle two
    done
    verify "$ROOT" two
    bundle two
    ;;
three)
    shared_round shared-3
    bundle three
    for count in 5 6 8 10; do
        python3 docs/bench-results/account_join.py "$count" 54 12 2>/dev/null | grep '^{' \
            >>"$OUT/account-join-${count}x54-three-h200-$TAG.jsonl"
    done
    bundle three
    ;;
four)
    shared_round shared-4a
    bundle four
    round "$ROOT" own-4 wgpu 12 3
    bundle four
    shared_round shared-4b
    bundle four
    ;;
five)
    for n in 1 2; do
        small_round "shared-$n" --shared-device
        small_round "own-$n"
        bundle five
    done
    ;;
six)
    round scratch/trees/x16 x16 wgpu 12 3
    bundle six
    round "$ROOT" x32 wgpu 12 3
    bundle six
    ;;
esac
