# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What the device's run summary costs (issue 14, twenty-eighth session): `python
docs/bench-results/summary_pass.py [REPEATS]` records the summary pass alone
(gpu_backend/run_summary.py) over a trial account's shape, 36 narrow instruments (4
chains) and 18 wide ones (32 chains), 40 draws each, K = 2, and over the 36 narrow ones
alone, each into its own submission with the read back of its rows, REPEATS times (default
40) after 5 untimed; one JSON line per shape: the median and minimum wall ms and the
pass's device ms from its compute pass's timestamps where the adapter has them. The
wide shape against the narrow one is what summarising the wide instruments on the device
costs a run; a pass with no wide module (a device without the workgroup memory) leaves
the wide rows NaN and costs what the narrow pass does."""

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np
import wgpu

from gpu_backend.run_summary import DeviceSummary, usage
from gpu_backend.wgpu_device import open_device
from regime_model import run_summary
from regime_model.params import n_params

K, S = 2, 40
D = n_params(K)


def inputs(chains: list[int], gen: np.random.Generator) -> tuple[np.ndarray, ...]:
    L = sum(chains)
    draws = gen.standard_normal((L, S, D)).astype(np.float32)
    p = np.where(gen.random((L, S)) < 0.3, 1.0, gen.random((L, S)))  # ties, as HMC makes
    var = np.exp(gen.normal(-8, 0.3, (L, S)))
    pred = np.stack([1 - p, p, 1e-3 * gen.standard_normal((L, S)), var], axis=-1)
    first = np.concatenate([[0], np.cumsum(chains)]).astype(np.uint32)
    return draws, pred.reshape(L * S, K + 2).astype(np.float32), first


def measure(summary: DeviceSummary, handle, chains: list[int], repeats: int, timed: bool) -> dict:
    draws, pred, first = inputs(chains, np.random.default_rng(3))
    L, n = len(draws), len(chains)
    energy = np.zeros((L, S), dtype=np.float32)
    u = wgpu.BufferUsage
    buffers = {"s_out": handle.create_buffer_with_data(
                   data=np.concatenate([draws.ravel(), energy.ravel()]), usage=u.STORAGE),
               "s_pred": handle.create_buffer_with_data(data=pred, usage=u.STORAGE)}
    for role, nbytes in summary.sizes(first, K, D, S).items():
        buffers[role] = handle.create_buffer(size=nbytes, usage=usage()[role])
    summary.write(handle.queue, buffers, first, S, -1)
    query = handle.create_query_set(type="timestamp", count=2) if timed else None
    stamps = handle.create_buffer(size=16, usage=u.QUERY_RESOLVE | u.COPY_SRC) if timed else None
    walls, device = [], []
    for r in range(repeats + 5):
        encoder = handle.create_command_encoder()
        writes = {"query_set": query, "beginning_of_pass_write_index": 0,
                  "end_of_pass_write_index": 1} if timed else None
        summary.encode(encoder, buffers, -1, K, n, writes)
        summary._group = None  # these buffers are not the pool's
        if timed:
            encoder.resolve_query_set(query, 0, 2, stamps, 0)
        t0 = time.perf_counter()
        handle.queue.submit([encoder.finish()])
        rows = np.frombuffer(handle.queue.read_buffer(buffers["r_rows"]), dtype=np.float32)
        wall = 1e3 * (time.perf_counter() - t0)
        if r >= 5:
            walls.append(wall)
            if timed:
                ticks = np.frombuffer(handle.queue.read_buffer(stamps), dtype=np.uint64)
                device.append(float(ticks[1] - ticks[0]) * 1e-6)
    rows = rows.reshape(n, run_summary.width(K, D))
    out = {"instruments": n, "lanes": L, "wide_instruments": sum(c > 4 for c in chains),
           "summarised": int((~np.isnan(rows).any(axis=1)).sum()),
           "wall_ms_median": round(float(np.median(walls)), 4),
           "wall_ms_min": round(float(np.min(walls)), 4)}
    if device:
        out["device_ms_median"] = round(float(np.median(device)), 4)
    return out


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    device = open_device()
    handle = device.handle
    summary = DeviceSummary(handle, (K,), wide=True)  # the daemon's on a GPU
    timed = "timestamp-query" in handle.features
    for chains in ([4] * 36, [4] * 36 + [32] * 18):
        row = measure(summary, handle, chains, repeats, timed)
        print(json.dumps({"adapter": device.info.adapter, "wide_module": summary.wide, **row}),
              flush=True)


if __name__ == "__main__":
    main()
