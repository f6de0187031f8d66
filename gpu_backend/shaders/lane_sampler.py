"""WGSL of a whole warm sampler run in ONE dispatch: a workgroup per lane, start to end.

shaders/sampler.py's one-thread-per-lane steps need a dispatch per leapfrog step (about
1,700 per update, recorded by the host, each waiting for the last). Lanes never talk to
each other, so nothing forces that: here one workgroup runs its lane's whole update, the
window loaded into workgroup memory once. Thread 0 does the per-lane scalar work with
sampler.py's own functions (momentum from the device Philox, drift, kick, the Metropolis
test, the step-size search, the draw's record); every thread takes part in each gradient
(shaders/hmm_scan.py's parallel-in-time forward-backward), the position handed to them
through workgroup memory. After each draw the workgroup filters the window at the draw
and writes what the strategy reads (P(regime | window), the next return's predictive mean
and variance), so the summary needs no second submission and no upload of the window per
draw. The lane's state (sampler.py's `fs` and `us`, the trajectory's position, gradient
and log density) lives in thread 0's private memory for the whole run: the module's text
is rewritten onto private copies (`_on_private_state`), copied in at the start and back
at the end.

Bindings: group 0 is the HMM kernels' own (theta: the starting position, read once);
group 1 the sampler's state and outputs.
"""

from __future__ import annotations

import re

from gpu_backend.pipeline_cache import HMM_BINDINGS
from gpu_backend.shaders.accumulate import Accumulate
from gpu_backend.shaders.hmm import hmm_source
from gpu_backend.shaders.hmm_scan import lane_threads_for, scan_source
from gpu_backend.shaders.sampler import sampler_functions

ENTRY_RUN = "run_lanes"
HMM_RW_BINDINGS = (*HMM_BINDINGS[:2], "storage", *HMM_BINDINGS[3:])
LANE_SAMPLER_BINDINGS: tuple[str, ...] = (
    "uniform",
    "storage",
    "storage",
    "read-only-storage",
    "storage",
    "storage",
    "read-only-storage",
    "read-only-storage",
    "read-only-storage",
)

_DECLARATIONS = """
@group(1) @binding(0) var<uniform> sp: Sp;
@group(1) @binding(1) var<storage, read_write> fs: array<f32>;     // [lanes, 4 D + NS]
@group(1) @binding(2) var<storage, read_write> us: array<u32>;     // [lanes, NW]
@group(1) @binding(3) var<storage, read> steps: array<u32>;        // [iterations]
// draws [lanes, S, D], then energy [lanes, S]
@group(1) @binding(4) var<storage, read_write> out: array<f32>;
// per draw: P(regime k | window) [K], the next return's mean and variance: [lanes, S, K + 2]
@group(1) @binding(5) var<storage, read_write> pred: array<f32>;
// The returns ring (gpu_backend/returns_ring.py): raw returns time-major [T, instruments],
// bar t of the window in slot (ring_head + t) % T; each instrument's scale; and the
// instrument of each of the batch's lane groups (an extension block's are a subset).
@group(1) @binding(6) var<storage, read> ring: array<f32>;
@group(1) @binding(7) var<storage, read> scale: array<f32>;
@group(1) @binding(8) var<storage, read> rows: array<u32>;
"""

_RUN = """
// The lane's position, shared through workgroup memory: thread 0 moves it (in `theta`),
// every thread reads it. No thread reads storage another wrote, so workgroup barriers
// order everything (storage barriers would also order device memory, which is dearer).
var<workgroup> shared_x: Theta;

fn share_position(lane: u32, j: u32) {
    if (j == 0u) { for (var d = 0u; d < DM; d++) { shared_x[d] = theta[lane * sp.D + d]; } }
    workgroupBarrier();
}

// The lane's window from the ring, scaled, into workgroup memory: y of the lane.
fn load_ring_window(lane: u32, j: u32) -> Chunk {
    let instrument = rows[lane / sp.chains];
    let s = scale[instrument];
    for (var t = j; t < params.T; t += LT) {
        ys[t] = ring[((sp.ring_head + t) % params.T) * sp.instruments + instrument] / s;
    }
    workgroupBarrier();
    return chunk_of(j);
}

// The draw's predictive from the workgroup's filter at the accepted position.
fn record_predictive(lane: u32, j: u32, c: Chunk, draw: u32) {
    if (j == 0u) { for (var d = 0u; d < DM; d++) { shared_x[d] = fs[fbase(lane) + d]; } }
    workgroupBarrier();
    let m = model_of(shared_x);
    let filtered = filter_at(lane, j, c, m);
    if (filtered.last) {
        let p = predictive_of(m, to_array(filtered.f.a));
        let at = (lane * sp.draws + draw) * (K + 2u);
        for (var k = 0u; k < K; k++) { pred[at + k] = p.a[k]; }
        pred[at + K] = p.mean;
        pred[at + K + 1u] = p.var_;
    }
}

@compute @workgroup_size(LT)
fn run_lanes(@builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) j: u32) {
    let lane = wid.y * groups.x + wid.x;
    if (lane >= params.lanes) { return; }
    if (j == 0u) { load_lane_state(lane); }
    var c: Chunk;
    if (sp.chains > 0u) { c = load_ring_window(lane, j); } else { c = load_window(lane, j); }
    share_position(lane, j);
    gradient_of(model_of(shared_x), lane, j, c);
    if (j == 0u) { init_lane(lane); }
    for (var it = 0u; it < sp.warmup + sp.draws; it++) {
        if (sp.shift == 1u) {
            if (j == 0u) { jump_propose_lane(lane); }
            share_position(lane, j);
            gradient_of(model_of(shared_x), lane, j, c);
            if (j == 0u) { jump_finish_lane(lane); }
        }
        if (j == 0u) { begin_lane(lane); }
        for (var s = 0u; s < steps[it]; s++) {
            if (j == 0u) { drift_lane(lane); }
            share_position(lane, j);
            gradient_of(model_of(shared_x), lane, j, c);
            if (j == 0u) { kick_lane(lane); }
        }
        if (j == 0u) { finish_lane(lane); }
        if (it >= sp.warmup) { record_predictive(lane, j, c, it - sp.warmup); }
    }
    if (j == 0u) { store_lane_state(); }
}
"""


# The lane's own state in thread 0's private memory for the whole run, copied in from the
# device buffers at the start and back at the end (the host reads fs and us). Thread 0
# runs every per-lane step (sampler.py's functions, the gradient's write-out); on device
# buffers each of its loads waited on the stores before it (buffers may alias) and the
# loads themselves went to L2, a chain of round trips per leapfrog step.
_LANE_STATE = """
var<private> lfs: array<f32, 4u * DM + NS>;
var<private> lus: array<u32, NW>;
var<private> lpos: array<f32, DM>;   // the trajectory's position (the HMM kernels' theta)
var<private> lgrad: array<f32, DM>;  // its gradient (out_vec)
var<private> lval: vec2<f32>;        // its log density (out_value)
var<private> lane_f0: u32;
var<private> lane_u0: u32;
var<private> lane_t0: u32;

fn load_lane_state(lane: u32) {
    lane_f0 = fbase(lane);
    lane_u0 = lane * NW;
    lane_t0 = lane * DM;
    for (var i = 0u; i < 4u * DM + NS; i++) { lfs[i] = fs[lane_f0 + i]; }
    for (var i = 0u; i < NW; i++) { lus[i] = us[lane_u0 + i]; }
    for (var d = 0u; d < DM; d++) { lpos[d] = theta[lane_t0 + d]; }
}

fn store_lane_state() {
    for (var i = 0u; i < 4u * DM + NS; i++) { fs[lane_f0 + i] = lfs[i]; }
    for (var i = 0u; i < NW; i++) { us[lane_u0 + i] = lus[i]; }
}
"""

# What the per-lane code reads and writes, and its private copy: `name[i]` becomes
# `copy[(i) - base]`, the lane's own offset taken off (an index the compiler folds to a
# constant, as D is one: `sp.D` and `params.D` become DM).
_PRIVATE = {"fs": ("lfs", "lane_f0"), "us": ("lus", "lane_u0"), "theta": ("lpos", "lane_t0"),
            "out_vec": ("lgrad", "lane_t0"), "out_value": ("lval", "")}  # fmt: skip


def _on_private_state(source: str) -> str:
    """source with every indexed access of the per-lane buffers on the private copies."""
    source = source.replace("sp.D", "DM").replace("params.D", "DM")
    out, i = [], 0
    pattern = re.compile(r"\b(" + "|".join(_PRIVATE) + r")\[")
    while (m := pattern.search(source, i)) is not None:
        depth, end = 1, m.end()
        while depth:
            depth += {"[": 1, "]": -1}.get(source[end], 0)
            end += 1
        copy, base = _PRIVATE[m.group(1)]
        index = _on_private_state(source[m.end() : end - 1])
        out.append(source[i : m.start()])
        out.append(f"{copy}[({index}) - {base}]" if base else copy)
        i = end
    return "".join(out) + source[i:]


def lane_sampler_source(K: int, lane_threads: int, workgroup: int, accumulate: Accumulate) -> str:
    """The one-dispatch module for K states (`workgroup`: the HMM module's own constant).
    Only `run_lanes` is dispatched from it; the HMM module's other entry points are in the
    text (their helpers are shared) and see the private copies, which they never run on."""
    lt = lane_threads_for(K, lane_threads)
    per_lane = _on_private_state(
        hmm_source(K, workgroup, accumulate, theta_writable=True)
        + scan_source(K, lt)
        + sampler_functions(workgroup, _DECLARATIONS)
        + _RUN.replace("{LT}", str(lt))
    )
    return per_lane + _LANE_STATE
