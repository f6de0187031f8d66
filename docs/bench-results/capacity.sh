#!/usr/bin/env bash
# Capacity per host (issue 17, item 6; docs/scaling.md): `regime-trader bench round` on the
# real daemon with more and more accounts of the trial's size (54 instruments each, 4
# chains, T = 256, K = 2), so the warm round, the CPU time per account-update and the
# largest worker's memory can be read against the account count.
#
#   bash docs/bench-results/capacity.sh gpu    # wgpu: 5, 10, 20, 40 accounts; 5 x 536
#   bash docs/bench-results/capacity.sh many   # wgpu: 80 and 160 accounts
#   bash docs/bench-results/capacity.sh cpu    # numpy: 4, 8, 16 accounts
#   bash docs/bench-results/capacity.sh dev    # numpy on a small host: 1, 2, 4 accounts of 8
#
# On the H200 run it AFTER the set-up of ../shared/device/README.md (wheels on PYTHONPATH,
# VK_DRIVER_FILES, XDG_RUNTIME_DIR); $OUT is the folder the JSON goes to. Each run is
# capped at LIMIT_S; SIGINT lets the bench stop its daemon before it exits. Paces are set
# above each shape's warm round where known, so that rounds do not overlap.
set -u
OUT=${OUT:?set OUT to the folder the results go to}
LIMIT_S=${LIMIT_S:-200}
HOST=${HOST:-h200}
CLI=(python3 -m service.cli)
[ -x .venv/bin/regime-trader ] && [ "$HOST" != h200 ] && CLI=(.venv/bin/regime-trader)

round() {  # NAME ARGS...: one bench run; its JSON and stderr under $OUT, and beside it
    # every 2 s: epoch seconds, GPU memory in use (MiB, where nvidia-smi answers), host
    # memory in use (MiB): capacity-$HOST-NAME.memory.txt (docs/scaling.md's memory figures)
    local name=$1
    shift
    local started=$SECONDS
    (while true; do
        echo "$(date +%s) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits \
            2>/dev/null || echo -) $(free -m | awk '/Mem:/{print $3}')"
        sleep 2
    done >"$OUT/capacity-$HOST-$name.memory.txt") &
    local sampler=$!
    timeout -s INT -k 30 "$LIMIT_S" "${CLI[@]}" bench round --chains 4 --window 256 \
        --states 2 "$@" --json --out "$OUT/capacity-$HOST-$name.json" \
        >/dev/null 2>"$OUT/capacity-$HOST-$name.stderr"
    echo "capacity $name: exit $?, $((SECONDS - started)) s"
    kill "$sampler"
}

case "${1:?gpu, cpu or dev}" in
gpu)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/gpu.txt" 2>&1
    round wgpu-a5 --backend wgpu --accounts 5 --instruments 270 --bars 8 --pace-s 2 --lead-s 30
    round wgpu-a10 --backend wgpu --accounts 10 --instruments 540 --bars 8 --pace-s 2 --lead-s 30
    round wgpu-a20 --backend wgpu --accounts 20 --instruments 1080 --bars 8 --pace-s 3 --lead-s 40
    round wgpu-a40 --backend wgpu --accounts 40 --instruments 2160 --bars 8 --pace-s 5 --lead-s 60
    round wgpu-a5-i536 --backend wgpu --accounts 5 --instruments 2680 --bars 8 --pace-s 3 --lead-s 30
    ;;
many)
    round wgpu-a80 --backend wgpu --accounts 80 --instruments 4320 --bars 6 --pace-s 5 --lead-s 90
    round wgpu-a160 --backend wgpu --accounts 160 --instruments 8640 --bars 6 --pace-s 10 --lead-s 150
    ;;
cpu)
    nproc >"$OUT/cpus.txt"
    round numpy-a4 --backend numpy --accounts 4 --instruments 216 --bars 4 --pace-s 15 --lead-s 20
    round numpy-a8 --backend numpy --accounts 8 --instruments 432 --bars 4 --pace-s 15 --lead-s 20
    round numpy-a16 --backend numpy --accounts 16 --instruments 864 --bars 4 --pace-s 25 --lead-s 30
    ;;
dev)
    round numpy-a1 --backend numpy --accounts 1 --instruments 8 --bars 5 --pace-s 8 --lead-s 15
    round numpy-a2 --backend numpy --accounts 2 --instruments 16 --bars 5 --pace-s 8 --lead-s 15
    round numpy-a4 --backend numpy --accounts 4 --instruments 32 --bars 5 --pace-s 12 --lead-s 20
    ;;
esac
