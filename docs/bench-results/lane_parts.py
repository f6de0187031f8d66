# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Which parts of a gradient set the one-dispatch lane sampler's run: `python
docs/bench-results/lane_parts.py [--runs R] [--only VARIANT] [N ...]` (default 5 runs, every
variant, 8 268) runs one warm batch of N instruments (K = 2, 4 chains, T = 256, 32 threads
per lane, the daemon's 15 warm-up iterations and 40 draws, after a cold update on the same
backend) with the module as built and with one part of each gradient taken out of its
source, R times after one untimed run each, and prints one JSON line per variant (`--only
"as built"`: that one alone, to compare trees; `--profile`: each run's device ms too, from
its compute pass's timestamps, the rest of its wall being the host's; `--kahan`: the sums
over time in compensated float32, not the adapter's f64; `--threads L`: L threads per lane,
lavapipe's subgroup 8 there, default 32): the median run's wall ms and the
microseconds per gradient (wall / a lane's gradient evaluations). A variant's draws are
meaningless (its chains do not sample the posterior); its run has the same iterations and
gradient count, so what it saves is what that part costs. A measurement, not a sampler.
The twenty-sixth session added the forward pass, the exponentials, the leapfrog steps'
gradients, the draws' records, three variants of the shuffled sums' tree and thread 0's
parts of an iteration, and ran it at 990 (3,960 lanes)."""

import argparse
import json

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.shaders.sampler import U_IT
from lane_latency import timed_runs  # beside this script
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh

ZERO_SUMS = "VSums(accv_zero(), accv_zero(), accv_zero(), accv_zero())"  # K = 2
_ROUNDS = (16, 8, 4, 2, 1)  # the sums' tree's rounds at 32 threads per lane
_NV = 9  # its sums at K = 2
# the shuffled sums' tree as straight-line code (constant indices, every round written out)
UNROLLED_TREE = "\n".join(
    f"    t[{i}u] = acc_sum(t[{i}u], subgroupShuffleDown(t[{i}u], {d}u));"
    for d in _ROUNDS for i in range(_NV)
)
VARIANTS: dict[str, list[tuple[str, str]]] = {
    "as built": [],
    # thread 0's leapfrog steps around each gradient: drift (storage reads and writes of
    # the position) and kick (the momentum from the gradient in storage)
    "no drift, no kick": [
        ("if (j == 0u) { drift_lane(lane); }", ""),
        ("if (j == 0u) { kick_lane(lane); }", ""),
    ],
    # thread 0's prior terms and gradient written to storage
    "no write_gradient": [
        ("acc_split(write_gradient(m, unpack(total), lane, total[0]))", "acc_split(total[0])")
    ],
    # the sums added across the workgroup (log2 LT rounds of 9 accumulators)
    "no reduce": [("let total = reduce(pack(f.ll, mine), j);", "let total = pack(f.ll, mine);")],
    # the backward pass over the chunk
    "no backward": [
        (
            "to_sums(backward_chunk(v, starts.after, starts.before, c.t0, c.t1))",
            f"to_sums({ZERO_SUMS})",
        )
    ],
    # the chunk's product and the two scans
    "no chunk product, no scans": [
        ("scan_starts(chunk_matrix(v, c.t0, c.t1), j)", "Starts(SV(1.0), SV(1.0))")
    ],
    # the sums' tree with each float64 shuffled as one float32 (shuffled rounds, f64 sums)
    "reduce shuffling f32": [
        (
            "t[i] = acc_sum(t[i], subgroupShuffleDown(t[i], d));",
            "t[i] = t[i] + f64(subgroupShuffleDown(f32(t[i]), d));",
        )
    ],
    # the sums' tree over 3 of its 9 sums (shuffled rounds)
    "reduce of 3 sums": [
        (
            "for (var i = 0u; i < NV; i++) { t[i] = acc_sum(",
            "for (var i = 0u; i < 3u; i++) { t[i] = acc_sum(",
        )
    ],
    # the same tree written out: no loops, constant indices (the same sums in the same order)
    "reduce unrolled": [
        (
            """    for (var d = LT / 2u; d > 0u; d >>= 1u) {
        for (var i = 0u; i < NV; i++) { t[i] = acc_sum(t[i], subgroupShuffleDown(t[i], d)); }
    }""",
            UNROLLED_TREE,
        )
    ],
    # thread 0's start of an iteration: momenta from Philox, kinetic energy, half kick
    "no begin_lane": [("if (j == 0u) { begin_lane(lane); }", "")],
    # thread 0's end of an iteration: the Metropolis test, step size, the draw's record
    # (the iteration count still moves on: the run's loops and checks read it; wbase: the
    # lane's words are thread 0's own copy since 387f896)
    "no finish_lane": [
        (
            "if (j == 0u) { took_theta = false; finish_lane(lane); }",
            f"if (j == 0u) {{ us[wbase(lane) + {U_IT}u] = us[wbase(lane) + {U_IT}u] + 1u; }}",
        )
    ],
    # thread 0's part of the level-shift move (its gradient stays)
    "no move's thread-0 work": [
        ("if (j == 0u) { jump_propose_lane(lane); }", ""),
        ("if (j == 0u) { took_theta = false; jump_finish_lane(lane); }", ""),
    ],
    # the forward pass over the chunk (its log likelihood and filtered messages)
    "no forward": [
        (
            "let f = forward_chunk(v, starts.before, c.t0, c.t1, true);",
            "var f: VForward; f.a = starts.before; f.ll = acc_zero();",
        )
    ],
    # the emissions' exponentials (each pass over the chunk computes its bars' again)
    "no exp in emissions": [("e.rel = exp(le - SV(e.log_max));", "e.rel = le - SV(e.log_max);")],
    # every gradient of the leapfrog steps (the lane's other work stays: thread 0's steps,
    # the move's gradient, the Metropolis tests, each draw's record)
    "no leapfrog gradients": [
        (
            """            share_position(lane, j);
            gradient_of(model_of(shared_x), lane, j, c);
            if (j == 0u) { kick_lane(lane); }""",
            """            share_position(lane, j);
            if (j == 0u) { kick_lane(lane); }""",
        )
    ],
    # each draw's predictive written from the filtered message
    "no predictive record": [
        (
            "if (it >= sp.warmup) { record_predictive(lane, j, c, it - sp.warmup); }",
            "",
        )
    ],
    # ten more workgroup barriers per gradient: what one costs
    "ten more barriers": [
        ("let starts = scan_starts(", "workgroupBarrier(); " * 10 + "let starts = scan_starts(")
    ],
}


def _variant(source: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        if old not in source:
            raise SystemExit(f"lane_parts.py: {old!r} is not in this tree's module")
        source = source.replace(old, new)
    return source


def measure(
    n: int, runs: int = 5, only: str | None = None, profile: bool = False, kahan: bool = False,
    threads: int = 32,
) -> None:
    T = 256
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec(extend_max=0, window=T)
    backend = WgpuBackend(lane_threads=threads, profile=profile,
                          accumulate="kahan" if kahan else None)  # fmt: skip
    _, carries, _ = refresh(series[:, :T], [None] * n, keys, 1, 7, spec, backend)
    batch, _ = build_batch(series[:, 1 : T + 1], carries, keys, 2, 7, spec)
    lane = backend.lane_sampler
    assert lane is not None
    built = lane.source
    for name, edits in VARIANTS.items():
        if only is not None and name != only:
            continue
        if any(old not in built(2, T) for old, _ in edits):  # another tree's variant
            print(json.dumps({"variant": name, "skipped": "not in this tree's module"}))
            continue
        lane.source = lambda K, T, edits=edits: _variant(built(K, T), edits)  # type: ignore[method-assign]
        backend.run_update(batch)  # compiles
        device: list[float] = []
        walls, evals = timed_runs(backend, batch, runs, device if profile else None)
        wall = float(np.median(walls))
        print(json.dumps({"variant": name, "instruments": n, "lanes": 4 * n, "T": T,
                          "threads": threads,
                          "wall_ms": round(wall, 2), "walls_ms": [round(w, 2) for w in walls],
                          "gradients_per_lane": evals,
                          "us_per_gradient": round(1e3 * wall / max(evals, 1), 2),
                          "device_ms": [round(d, 2) for d in device] or None,
                          "sums": backend.kernels.accumulate,
                          "adapter": backend.device.info.adapter}), flush=True)  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a warm run's parts, taken out one by one")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", help='one variant, e.g. "as built"')
    parser.add_argument("--profile", action="store_true", help="each run's device ms too")
    parser.add_argument("--kahan", action="store_true", help="sums in compensated float32")
    parser.add_argument("--threads", type=int, default=32,
                        help="threads per lane (lavapipe's subgroup: 8)")
    parser.add_argument("instruments", type=int, nargs="*", default=[8, 268])
    a = parser.parse_args()
    for n in a.instruments:
        measure(n, a.runs, a.only, a.profile, a.kahan, a.threads)
