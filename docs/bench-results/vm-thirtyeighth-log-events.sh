#!/bin/sh
# What one log event costs a worker, alternated between trees (thirty-eighth session,
# issue 14 item 4): PATH=/work/main/.venv/bin:$PATH sh
# docs/bench-results/vm-thirtyeighth-log-events.sh REPS TREE... prints log_event_cost.py
# forward's us per event (seven passes of 100 events) for each tree in turn.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/alternate.sh"
reps=$1
shift
one() {  # one TREE REP
    (cd "$1" && PYTHONPATH=$1 python "$here/log_event_cost.py" forward) | sed "s/^/$(basename "$1")-$2 /"
}
alternate "$reps" one "$@"
