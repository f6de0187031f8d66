#!/bin/sh
# The H200 call of the thirty-seventh session (issue 14), 2026-12-05: item 4 at 268
# instruments per account, where it is not met, on the H200 host: `bench stages` of this
# tree (the WAL copied back after each bar, the decisions as columns, the windows' sums
# read from the returns table's view) against head37 (a `git archive` of
# b4953d9, the session's start, carried as scratch/trees/head37), alternated; where the
# checkpoint's time goes there (checkpoint_parts.py, the stage unsynced, the fsync
# alone); then the thirty-sixth session's prepared second call: the trial round of this
# tree against head36 (a `git archive` of e42c020, its first call's tree).
# Set-up as in h200-thirtyfifth.sh, carrying .gl, .whl, .whl-np and
# scratch/trees/{head36,head37}; each step's results bundled after it.
set -u
ROOT=$(pwd)
SESSION=thirtyseventh
. "$(dirname "$0")/h200-lib.sh"  # TAG, TREES and the steps
if [ "${1:-one}" = two ]; then
    # The second call: the first ran on an H100 host, its rounds one each (this tree,
    # then head36); the pair again in the other order, and bench stages at 54 of head37.
    round "$TREES/head36" "head36-4" wgpu 12 3
    bundle two
    round "$ROOT" "new37-2" wgpu 12 3
    bundle two
    stages "$TREES/head37" head37 54
    bundle two
    exit 0
fi
stages "$ROOT" new37-1 268
stages "$TREES/head37" head37-1 268
stages "$ROOT" new37-2 268
stages "$TREES/head37" head37-2 268
bundle one
checkpoint_where "$ROOT" 268 new37
bundle one
round "$ROOT" "new37-1" wgpu 12 3
bundle one
round "$TREES/head36" "head36-3" wgpu 12 3
bundle one
stages "$ROOT" new37 54
bundle one
