#!/bin/sh
# The fortieth session's trees in the checkpoint rig of carries_off_the_bar.py on this VM
# (issue 14, item 4): its `staged` mode (the worker's step after the sampler, as built) at
# 268 instruments, 24 warm updates, the trees alternated REPS times.
# `PATH=/work/main/.venv/bin:$PATH sh docs/bench-results/vm-fortieth-rig.sh REPS TREE...`
# (each TREE a checkout or `git archive`; its folder's name labels its JSON line).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/alternate.sh"
rig() {  # rig TREE REP
    (cd "$1" && PYTHONPATH="$1" python "$HERE/carries_off_the_bar.py" 268 24 1 staged) \
        2>/dev/null | grep '^{' | sed "s/^/$(basename "$1")-$2: /"
}
reps=$1
shift
alternate "$reps" rig "$@"
