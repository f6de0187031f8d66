#!/bin/sh
# The device call prepared in the fortieth session (issue 14, item 4), for the next host
# lent (none was lent in the fortieth session): the daemon itself at 268 instruments an
# account, one account, with part timers in its worker (daemon_parts/sitecustomize.py,
# RT_PARTS_OUT), this tree against head40 (a `git archive` of 010c459, the session's start,
# carried as scratch/trees/head40), alternated: the carries written between bars as the
# next checkpoint's row (schema version 9), and the windows' sums slid on. Then the trial
# round of this tree, the issue's H200 figures, and the two changes' own comparisons.
# Set-up as in h200-thirtyfifth.sh, carrying .gl, .whl, .whl-np and scratch/trees/head40;
# each step's results bundled after it.
set -u
ROOT=$(pwd)
SESSION=fortieth
. "$(dirname "$0")/h200-lib.sh"  # TAG, TREES and the steps
if [ "${1:-one}" = two ]; then
    # A second call, on whatever host comes: the daemon pair once more (another host's
    # spread), this tree first.
    parts_pair new40-3 head40-3 "$TREES/head40" two
    exit 0
fi
for rep in 1 2; do
    parts_pair "new40-$rep" "head40-$rep" "$TREES/head40" one
done
round "$ROOT" new40-1 wgpu 12 3
bundle one
# The two changes' own comparisons on this host (each alternates its modes twice):
# the carries staged or written by the bar, and the window sums slid or summed whole.
script carries-off-the-bar 240 carries_off_the_bar.py 268 24 2
script window-sums-slid 240 window_sums_slid.py 268 24 2
cat "$OUT"/carries-off-the-bar-*.jsonl "$OUT"/window-sums-slid-*.jsonl >>"$OUT/summary.txt"
bundle one
