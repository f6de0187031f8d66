#!/bin/sh
# The twenty-fifth session's H200 calls (issue 14), 2026-12-04.
# `one`: several accounts' warm batches joined into one dispatch (batch_join, 2339d80):
# verify-gpu --quick (its joint check now joins the two accounts' runs) and the golden
# digest; account_join.py 5 54, 5 8 and 5 54 again, 12 repeats each. (In the call the
# script's account_join steps failed on a wide carry, mended in the script; the three
# runs were then made by hand in the same lease, one command as below.)
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
ROOT=$(pwd)
SESSION=twentyfifth
TAG=twentyfifth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"

case ${1:?one} in
one)
    verify_digest "$ROOT"
    bundle one
    for shape in "5 54" "5 8" "5 54"; do
        python3 docs/bench-results/account_join.py $shape 12 2>/dev/null | grep '^{' \
            >>"$OUT/account-join-$(echo "$shape" | tr ' ' x)-h200-$TAG.jsonl"
    done
    bundle one
    ;;
esac
