#!/bin/sh
# The twenty-eighth session's H200 calls (issue 14), 2026-12-04: how wide a two-readings
# window starts ([model] extension_chains), against the run-on blocks it saves.
# `one`: the trial round, own device each, at extension_chains 32 (the default until this
# session) and 64, alternated twice (bench round --extension-chains).
# `two`: verify-gpu --quick and the golden digest; the trial round at 48 and 64, then 32
# and 64 again.
# Set-up as in h200-model.sh, carrying .gl, .whl and .whl-np.
set -u
ROOT=$(pwd)
SESSION=twentyeighth
TAG=twentyeighth-2026-12-04
. "$(dirname "$0")/h200-lib.sh"

case ${1:?one or two} in
one)
    for n in 1 2; do
        round "$ROOT" "e32-$n" wgpu 12 3 --extension-chains 32
        round "$ROOT" "e64-$n" wgpu 12 3 --extension-chains 64
        bundle one
    done
    ;;
two)
    verify_digest "$ROOT"
    bundle two
    round "$ROOT" e48-3 wgpu 12 3 --extension-chains 48
    round "$ROOT" e64-3 wgpu 12 3 --extension-chains 64
    bundle two
    round "$ROOT" e32-4 wgpu 12 3 --extension-chains 32
    round "$ROOT" e64-4 wgpu 12 3 --extension-chains 64
    bundle two
    ;;
esac
