#!/bin/sh
# The twenty-fifth session's H200 calls (issue 14), 2026-12-04.
# `one`: several accounts' warm batches joined into one dispatch (batch_join, 2339d80):
# verify-gpu --quick (its joint check now joins the two accounts' runs) and the golden
# digest; account_join.py 5 54 and 5 268 / 5 (the trial shape's accounts) alone against
# joined, 12 repeats each.
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
    script account-join-54 150 account_join.py 5 54 12
    bundle one
    script account-join-8 150 account_join.py 5 8 12
    bundle one
    ;;
esac
