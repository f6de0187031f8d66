# Sourced by the h200 session scripts from the seventeenth session on: the steps they share.
# The caller sets OUT (the results, brought back as one archive), LOGS, TAG (the results'
# suffix), CALLS (the archive's name stem) and FINAL (the folder the archive goes to); or,
# from the eighteenth session on, TAG and SESSION, from which the rest follow, OUT being
# the device tool's folder for what comes back; from the thirty-seventh on, SESSION alone
# (TAG then SESSION-DATE; TREES the carried trees, scratch/trees).
# shellcheck shell=sh
TREES=${TREES:-$(pwd)/scratch/trees}
if [ -n "${SESSION:-}" ]; then
    TAG=${TAG:-$SESSION-$(date +%Y-%m-%d)}
    FINAL=$(cd "${OUT:?set OUT to the folder for the results}" && pwd)
    OUT=/tmp/h200-$SESSION-results
    LOGS=/tmp/h200-$SESSION-logs
    CALLS=h200-$SESSION
fi
. "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S COMMAND...
TRIAL="--accounts 5 --instruments 268 --chains 4 --window 256 --states 2"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/np .whl-np/*.whl
export PYTHONPATH=/tmp/np:$PYTHONPATH
mkdir -p "$LOGS" "$OUT"

in_tree() {  # in_tree TREE COMMAND...: the command in the tree, its packages first
    tree=$1
    shift
    (cd "$tree" && PYTHONPATH=$(pwd):$PYTHONPATH "$@")
}

stages() {  # stages TREE NAME N: bench stages at N instruments
    in_tree "$1" step "stages-$2-$3" 120 python3 -m service.cli bench stages \
        --instruments "$3" --window 256 --updates 12 --out "$OUT/stages-h200-$3-$2-$TAG.json"
}

model() {  # model TREE NAME: bench model at the trial shape on wgpu (ESS/s)
    in_tree "$1" step "model-$2" 150 python3 -m service.cli bench model --shape trial \
        --backend wgpu --out "$OUT/model-trial-h200-wgpu-$2-$TAG.json"
}

round() {  # round TREE NAME BACKEND BARS PACE_S [FLAGS...]: FLAGS go to bench round
    tree=$1 name=$2 backend=$3 bars=$4 pace=$5
    shift 5
    # shellcheck disable=SC2086 # TRIAL is a list of flags
    in_tree "$tree" step "round-$name-$backend" 330 python3 -m service.cli bench round $TRIAL \
        --backend "$backend" --bars "$bars" --pace-s "$pace" --lead-s 25 "$@" \
        --out "$OUT/round-h200-$backend-$name-$TAG.json"
    grep -E "warm round|cold round" "$LOGS/round-$name-$backend.log" \
        | sed "s/^/$name $backend: /" >>"$OUT/summary.txt"
}

script() {  # script NAME LIMIT SCRIPT ARGS...: a bench script's JSON lines, run from ROOT
    name=$1 limit=$2 file=$3
    shift 3
    step "$name" "$limit" python3 "$ROOT/docs/bench-results/$file" "$@"
    grep '^{' "$LOGS/$name.log" >"$OUT/$name-h200-$TAG.jsonl"
}

bundle() {  # bundle NAME: the results in one archive, and the summary beside it
    tar -czf "$FINAL/$CALLS-$1.tgz" -C "$OUT" . && cp "$OUT/summary.txt" "$FINAL/"
}

verify() {  # verify TREE [CALL]: verify-gpu --quick (verify-h200[-CALL]-TAG.json), its
    # verdict lines in the summary
    name=verify${2:+-$2}
    in_tree "$1" step "$name" 150 python3 -m service.cli verify-gpu --quick \
        --out "$OUT/verify-h200${2:+-$2}-$TAG.json"
    tail -4 "$LOGS/$name.log" >>"$OUT/summary.txt"
}

verify_digest() {  # verify_digest TREE: verify-gpu --quick and the golden digest
    verify "$1"
    in_tree "$1" step digest 120 python3 -m service.cli bench digest --json
    grep '^{' "$LOGS/digest.log" >"$OUT/digest-h200-$TAG.json"
}

checkpoint_where() {  # checkpoint_where TREE N NAME: where the checkpoint stage's time goes
    # at N instruments on this host: its parts (checkpoint_parts.py), bench stages with the
    # WAL never synced (stages_nosync.py), and a 4 KB fsync alone (fsync_time.py)
    in_tree "$1" step "checkpoint-parts-$2" 120 python3 \
        "$ROOT/docs/bench-results/checkpoint_parts.py" "$2"
    cp "$LOGS/checkpoint-parts-$2.log" "$OUT/checkpoint-parts-$2-h200-$TAG.txt"
    in_tree "$1" step "stages-nosync-$2" 120 python3 "$ROOT/docs/bench-results/stages_nosync.py" \
        bench stages --instruments "$2" --window 256 --updates 12 \
        --out "$OUT/stages-h200-$2-nosync-$3-$TAG.json"
    step fsync 60 python3 "$ROOT/docs/bench-results/fsync_time.py" /tmp 200
    grep '^{' "$LOGS/fsync.log" >>"$OUT/summary.txt"
}

stages_on() {  # stages_on TREE NAME N BACKEND [UPDATES [PACE_MS]]: bench stages at N on
    # BACKEND in any tree (stages_backend.py; from the thirty-eighth session)
    tree=$1 name=$2 n=$3 backend=$4
    shift 4
    in_tree "$tree" step "stages-$name-$n-$backend" 150 python3 \
        "$ROOT/docs/bench-results/stages_backend.py" "$n" "$backend" \
        "$OUT/stages-h200-$n-$backend-$name-$TAG.json" "$@"
}

parts_268() {  # parts_268 NAME TREE: the daemon with one account of 268 instruments, its
    # worker's parts timed (daemon_parts/sitecustomize.py; thirty-ninth session on)
    mkdir -p "$OUT/parts-$1"
    RT_PARTS_OUT="$OUT/parts-$1" PYTHONPATH="$ROOT/docs/bench-results/daemon_parts:$PYTHONPATH" \
        in_tree "$2" step "round-268-one-$1" 300 python3 -m service.cli bench round \
        --accounts 1 --instruments 268 --chains 4 --window 256 --states 2 --bars 12 \
        --pace-s 3 --lead-s 25 --backend wgpu --out "$OUT/round-h200-wgpu-one-268-$1-$TAG.json"
    python3 "$ROOT/docs/bench-results/daemon_parts/summary.py" "$OUT/parts-$1" \
        >"$OUT/daemon-parts-268-$1-$TAG.txt"
    grep -E "checkpoint |decide_targets|^checkpoint|COMMIT" "$OUT/daemon-parts-268-$1-$TAG.txt" \
        | sed "s/^/$1 /" >>"$OUT/summary.txt"
}

parts_pair() {  # parts_pair NEW OLD OLD_TREE CALL: parts_268 of this tree (ROOT) as NEW,
    # then of OLD_TREE as OLD, the results bundled into CALL's archive after each
    parts_268 "$1" "$ROOT"
    bundle "$4"
    parts_268 "$2" "$3"
    bundle "$4"
}
