#!/bin/sh
# The twenty-third session's H200 calls (issue 14), 2026-12-03.
# `one`: shared_device.py (written in the twenty-second session, not run there): five
# accounts of 54 in one process on one device, serial, on threads, on threads with their
# runs gathered into one submission, and as one batch of 270, back to back and 3 s apart
# with the clock wake; then verify-gpu --quick (its joint-submission check on the GPU),
# the golden digest, and `bench model --shape trial --backend wgpu` (the chained ESS).
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np; runs in the working tree.
set -u
ROOT=$(pwd)
SESSION=twentythird
TAG=twentythird-2026-12-03
. "$(dirname "$0")/h200-lib.sh"

script() {  # script NAME LIMIT SCRIPT ARGS...: a bench script's JSON lines, in this tree
    name=$1 limit=$2 file=$3
    shift 3
    step "$name" "$limit" python3 "$ROOT/docs/bench-results/$file" "$@"
    grep '^{' "$LOGS/$name.log" >"$OUT/$name-h200-$TAG.jsonl"
}

case ${1:?one} in
one)
    script shared-device-0 150 shared_device.py 5 54 6 0 0
    bundle one
    script shared-device-3 150 shared_device.py 5 54 6 3 0.5
    bundle one
    verify_digest "$ROOT"
    bundle one
    model "$ROOT" head23
    bundle one
    ;;
esac
