# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What bounds how many lanes the one-dispatch sampler runs at once (issue 14): a warm
batch's device time against its lanes, in steps of one workgroup per multiprocessor, for
the module as built and with PAD bytes more workgroup memory per lane (an array the kernel
touches, so the driver must allocate it). If the time's steps (its waves of workgroups)
move to fewer lanes with the pad, workgroup memory bounds the lanes per multiprocessor;
if not, registers or the block limit do. Each VARIANT is ROUNDS:PAD, ROUNDS `wg` (the
scan's rounds through workgroup memory) or `sg` (shuffles within a subgroup:
shaders/scan_rounds.py; a bare PAD is `wg:PAD`).

    python docs/bench-results/occupancy_probe.py [--sms 132] [--from 8] [--to 32] \
        [--step 2] [--repeats 4] [--lane-threads LT] VARIANT [VARIANT ...]

One JSON line per (variant, lanes): the device_update ms of each repeat (back to back,
after one untimed run at that size). T 256, K 2, 4 chains, the daemon's ModelSpec, no
run-on. The first variant's draws are checked against each other's at every size (the
same bits: the pad reads zeros, the shuffles add the same terms in the same order).
"""

import argparse
import json
from dataclasses import replace
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

import gpu_backend.wgpu_lane_sampler as lane_module
from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import open_device
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh

T = 256
_BUILT = lane_module.lane_sampler_source


def padded(pad: int) -> Any:
    """lane_sampler_source with `pad` bytes of workgroup memory that every lane writes and
    reads (never changes a result: the read is of zeros)."""
    n = max(1, pad // 16)

    def source(*args: Any, **kwargs: Any) -> str:
        text = _BUILT(*args, **kwargs)
        if not pad:
            return text
        text = text.replace(
            "@compute @workgroup_size(LT)\nfn run_lanes",
            f"var<workgroup> occupancy_pad: array<vec4<f32>, {n}u>;\n\n"
            "@compute @workgroup_size(LT)\nfn run_lanes",
        )
        return text.replace(
            "    var c: Chunk;\n    if (sp.chains",
            f"    for (var q = j; q < {n}u; q += LT) {{ occupancy_pad[q] = vec4<f32>(0.0); }}\n"
            "    workgroupBarrier();\n"
            f"    if (occupancy_pad[(j * 7u) % {n}u].x != 0.0) {{ us[lane * NW] = 0u; }}\n"
            "    var c: Chunk;\n    if (sp.chains",
        )

    return source


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--from", dest="lo", type=int, default=8)
    ap.add_argument("--to", dest="hi", type=int, default=32)
    ap.add_argument("--step", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--lane-threads", type=int, default=None)  # the backend's default
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    spec = ModelSpec(window=T)
    N_max = a.hi * a.sms // spec.chains
    device = open_device()
    returns = 0.01 * regime_returns(N_max, T + 1, np.random.default_rng(5))
    keys = np.arange(N_max, dtype=np.uint32)
    cold = WgpuBackend(device, wake_clocks=False)
    _, carries, _ = refresh(returns[:, :-1], [None] * N_max, keys, 1, 7,
                            replace(spec, extend_max=0), cold, diagnose="none")  # fmt: skip
    first: dict[int, Any] = {}
    for variant in a.variants:
        rounds, _, pad_text = variant.rpartition(":")
        pad = int(pad_text)
        lane_module.lane_sampler_source = padded(pad)
        backend = WgpuBackend(device, wake_clocks=False, subgroups=rounds == "sg",
                              lane_threads=a.lane_threads)  # fmt: skip
        for per_sm in range(a.lo, a.hi + 1, a.step):
            N = per_sm * a.sms // spec.chains
            batch, _ = build_batch(returns[:N, 1:], carries[:N], keys[:N], 2, 7, spec)
            draws = backend.run_update(batch).draws
            same = bool(np.array_equal(first.setdefault(per_sm, draws), draws))
            ms = [round(backend.run_update(batch).timings_ms["device_update"], 2)
                  for _ in range(a.repeats)]  # fmt: skip
            shuffles = backend.lane_sampler is not None and backend.lane_sampler.subgroups
            print(json.dumps({"rounds": rounds or "wg", "pad_bytes": pad, "per_sm": per_sm,
                              "lanes": N * spec.chains, "adapter": backend.adapter,
                              "subgroups": shuffles, "same_bits": same,
                              "device_update_ms": ms}), flush=True)  # fmt: skip
    lane_module.lane_sampler_source = _BUILT


if __name__ == "__main__":
    main()
