"""WGSL of a whole warm sampler run in ONE dispatch: a workgroup per lane, start to end.

shaders/sampler.py's one-thread-per-lane steps need a dispatch per leapfrog step (about
1,700 per update, recorded by the host, each waiting for the last). Lanes never talk to
each other, so nothing forces that: here one workgroup runs its lane's whole update, the
window loaded into workgroup memory once. Thread 0 does the per-lane scalar work with
sampler.py's own functions (momentum from the device Philox, drift, kick, the Metropolis
test, the step-size search, the draw's record), on its own copy of the lane's state and
trajectory, loaded at the run's start and stored at its end (shaders/lane_io.py: 13-18 %
less time where the GPU is full, docs/benchmarks.md); every thread takes part in each gradient
(shaders/hmm_scan.py's parallel-in-time forward-backward), the position handed to them
through workgroup memory. After each draw the workgroup writes what the strategy reads
(P(regime | window), the next return's predictive mean and variance) from the filtered
message of the gradient evaluated at the draw's position, so the summary needs no second
submission, no upload of the window per draw and no filter pass of its own.

One dispatch on a GPU. llvmpipe (lavapipe, the CPU adapter of the tests) ends every loop of
an invocation once all its loops together have run LP_MAX_TGSI_LOOP_ITERATIONS (65,535)
times: a longer run would silently stop moving its chains, so there the run is split into
dispatches of at most `gradient_budget` gradient evaluations, each going on from the lanes'
iteration count (`dispatch_starts`: the host's copy of the kernel's rule).

Bindings: group 0 is the HMM kernels' own (of which the module reads the params and, for a
batch without a returns ring, y: the trajectory's theta and the gradient there are thread
0's registers); group 1 the sampler's state and outputs.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from gpu_backend.shaders.accumulate import Accumulate
from gpu_backend.shaders.hmm import hmm_source
from gpu_backend.shaders.hmm_scan import lane_threads_for, scan_source
from gpu_backend.shaders.sampler import U_IT, U_SCHEDULE, sampler_functions

ENTRY_RUN = "run_lanes"
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
@group(1) @binding(1) var<storage, read_write> lane_fs: array<f32>;  // [lanes, 4 D + NS]
@group(1) @binding(2) var<storage, read_write> lane_us: array<u32>;  // [lanes, NW]
@group(1) @binding(3) var<storage, read> steps: array<u32>;  // [schedules, iterations]
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

// Thread 0's copy of its lane's state (shaders/sampler.py's layout) for the whole dispatch:
// loaded at the start, stored at the end, in registers between (its loops over the
// parameters run to the constant DM). The sampler's functions read and write it, and the
// trajectory's position, gradient and log density (theta, out_vec, out_value: private in
// this module: shaders/lane_io.py) never go through memory.
const FS_LANE: u32 = 4u * DM + NS;
var<private> fs: array<f32, FS_LANE>;
var<private> us: array<u32, NW>;
fn fbase(l: u32) -> u32 { return 0u; }
fn wbase(l: u32) -> u32 { return 0u; }

fn load_state(lane: u32) {
    for (var i = 0u; i < FS_LANE; i++) { fs[i] = lane_fs[lane * FS_LANE + i]; }
    for (var i = 0u; i < NW; i++) { us[i] = lane_us[lane * NW + i]; }
    for (var d = 0u; d < DM; d++) { theta[d] = fs[d]; }  // the trajectory starts at the lane
}

fn store_state(lane: u32) {
    for (var i = 0u; i < FS_LANE; i++) { lane_fs[lane * FS_LANE + i] = fs[i]; }
    for (var i = 0u; i < NW; i++) { lane_us[lane * NW + i] = us[i]; }
}
"""

_RUN = """
// The lane's position, shared through workgroup memory: thread 0 moves it (in `theta`),
// every thread reads it. No thread reads storage another wrote, so workgroup barriers
// order everything (storage barriers would also order device memory, which is dearer).
var<workgroup> shared_x: Theta;

fn share_position(lane: u32, j: u32) {
    if (j == 0u) { for (var d = 0u; d < DM; d++) { shared_x[d] = theta[pbase(lane) + d]; } }
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

// The filtered message at the window's last bar at the lane's position, on the thread that
// owns that bar (the draw's predictive reads it). Each Metropolis test that moves the lane
// takes it to `theta`, where the last gradient was evaluated: that gradient's message is
// the position's (hmm_scan's last_filtered), so no draw needs a filter pass of its own.
var<private> position_filtered: SV;
var<workgroup> shared_moved: u32;

fn follow_move(j: u32) {
    if (j == 0u) { shared_moved = select(0u, 1u, took_theta); }
    if (workgroupUniformLoad(&shared_moved) == 1u) { position_filtered = last_filtered; }
}

// The lane's position (its state's, not the trajectory's) into workgroup memory.
fn share_lane_position(lane: u32, j: u32) {
    if (j == 0u) { for (var d = 0u; d < DM; d++) { shared_x[d] = fs[fbase(lane) + d]; } }
    workgroupBarrier();
}

// The draw's predictive at the lane's position.
fn record_predictive(lane: u32, j: u32, c: Chunk, draw: u32) {
    share_lane_position(lane, j);
    if (owns_last_bar(c)) {
        let p = predictive_of(model_of(shared_x), to_array(position_filtered));
        let at = (lane * sp.draws + draw) * (K + 2u);
        for (var k = 0u; k < K; k++) { pred[at + k] = p.a[k]; }
        pred[at + K] = p.mean;
        pred[at + K + 1u] = p.var_;
    }
    workgroupBarrier();  // shared_x is read above before thread 0 writes it again
}

// Where this dispatch starts: the lane's iteration count, which every lane shares (a run is
// one dispatch, or on a driver that bounds loops several: `budget` below).
var<workgroup> shared_start: u32;
// The lane's row of the step schedules, loaded uniformly: its loop bounds hold barriers.
var<workgroup> shared_schedule: u32;
{SUBGROUP_DECL}
@compute @workgroup_size(LT)
fn run_lanes(@builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) j: u32{SUBGROUP_ARG}) {
    let lane = wid.y * groups.x + wid.x;
    if (lane >= params.lanes) { return; }
{SUBGROUP_CHECK}    if (j == 0u) { load_state(lane); }
    var c: Chunk;
    if (sp.chains > 0u) { c = load_ring_window(lane, j); } else { c = load_window(lane, j); }
{START}
    if (j == 0u) { shared_schedule = us[{SCHEDULE}u]; }
    let schedule = workgroupUniformLoad(&shared_schedule) * (sp.warmup + sp.draws);
    // Gradient evaluations in this dispatch: the start's (or a later dispatch's filter at
    // the lane's position, counted as one), then each iteration's.
    var used = 1u;
    if (start == 0u) {
        share_position(lane, j);
        gradient_of(model_of(shared_x), lane, j, c);
        position_filtered = last_filtered;
        if (j == 0u) { init_lane(lane); }
    }
{RESUME}
    for (var it = start; it < sp.warmup + sp.draws; it++) {
        // A dispatch stops before the iteration that would pass the budget; the next
        // dispatch goes on from there.
        let n_steps = steps[schedule + it];
        let cost = n_steps + sp.shift;
{STOP}
        used += cost;
        if (sp.shift == 1u) {
            if (j == 0u) { jump_propose_lane(lane); }
            share_position(lane, j);
            gradient_of(model_of(shared_x), lane, j, c);
            if (j == 0u) { took_theta = false; jump_finish_lane(lane); }
            follow_move(j);
        }
        if (j == 0u) { begin_lane(lane); }
        for (var s = 0u; s < n_steps; s++) {
            if (j == 0u) { drift_lane(lane); }
            share_position(lane, j);
            gradient_of(model_of(shared_x), lane, j, c);
            if (j == 0u) { kick_lane(lane); }
        }
        if (j == 0u) { took_theta = false; finish_lane(lane); }
        follow_move(j);
        if (it >= sp.warmup) { record_predictive(lane, j, c, it - sp.warmup); }
    }
    if (j == 0u) { store_state(lane); }
}
"""


# A split run's dispatch starts at the lanes' iteration count and stops before the iteration
# that would pass its budget; an unsplit run (a GPU's) starts at 0 and runs to the end, so
# its module is the one it was before runs could be split.
_SPLIT = {
    "{START}": """    if (j == 0u) { shared_start = us[{IT}u]; }
    let start = workgroupUniformLoad(&shared_start);""",
    # A later dispatch's lanes start where an earlier dispatch left them, whose gradients
    # (and their filtered messages) this invocation never saw: filter the positions once.
    "{RESUME}": """    if (start > 0u) {
        share_lane_position(lane, j);
        let resumed = filter_at(lane, j, c, model_of(shared_x));
        if (resumed.last) { position_filtered = resumed.f.a; }
        workgroupBarrier();
    }""",
    "{STOP}": """        if (sp.budget > 0u && it > start && used + cost > sp.budget) { break; }""",
}
_WHOLE = {"{START}": "    let start = 0u;", "{RESUME}": "", "{STOP}": ""}

# Shuffle rounds (shaders/scan_rounds.py) read the lane's other threads only if they are
# one subgroup: a lane run at another subgroup size writes SUBGROUP_MARK | that size as its
# iteration count and stops (wgpu_lane_sampler reads it), rather than mix lanes' values.
SUBGROUP_MARK = 0xFFFF0000
_SUBGROUPS = {
    "{SUBGROUP_ARG}": ",\n             @builtin(subgroup_size) subgroup: u32",
    "{SUBGROUP_DECL}": "// The subgroup size the driver runs this pipeline at.\n"
    "var<workgroup> shared_subgroup: u32;\n",
    "{SUBGROUP_CHECK}": f"""    if (j == 0u) {{ shared_subgroup = subgroup; }}
    let threads = workgroupUniformLoad(&shared_subgroup);
    if (threads != LT) {{
        if (j == 0u) {{ lane_us[lane * NW + {{IT}}u] = {SUBGROUP_MARK}u | threads; }}
        return;
    }}
""",
}
_NO_SUBGROUPS = {"{SUBGROUP_ARG}": "", "{SUBGROUP_DECL}": "", "{SUBGROUP_CHECK}": ""}

# llvmpipe's bound on the loop iterations of one invocation, all loops together (Mesa's
# gallivm, LP_MAX_TGSI_LOOP_ITERATIONS); past it every loop exits at once.
LLVMPIPE_LOOP_LIMIT = 65_535


def gradient_budget(chunk: int, D: int) -> int:
    """Gradient evaluations one invocation may run within half of llvmpipe's loop limit.
    A gradient runs three loops over the thread's chunk of bars and about 50 others (scans,
    reductions, the sampler's loops over parameters): measured on lavapipe, 3 chunk + 50 per
    gradient at K = 2 (docs/benchmarks.md, twentieth session); bounded here by 4 chunk +
    8 D + 64."""
    return max(1, (LLVMPIPE_LOOP_LIMIT // 2) // (4 * chunk + 8 * D + 64))


def dispatch_starts(steps: npt.NDArray[np.uint32], shift: bool, budget: int) -> list[int]:
    """The iteration each dispatch of a run starts at: run_lanes' rule on the host. A
    dispatch takes iterations while their gradients (steps + the move) stay within `budget`
    (0: no bound), at least one; each also evaluates its start (the first a gradient, a
    later one the filter at the lanes' positions), counted as one."""
    if not budget:
        return [0]
    costs = steps.astype(np.int64) + int(shift)
    starts, used = [0], 1
    for it, cost in enumerate(costs.tolist()):
        if it > starts[-1] and used + cost > budget:
            starts.append(it)
            used = 1
        used += cost
    return starts


@functools.cache
def lane_sampler_source(
    K: int,
    lane_threads: int,
    workgroup: int,
    accumulate: Accumulate,
    capacity: int,
    split: bool = False,
    subgroups: bool = False,
    keep_emissions: bool = False,
) -> str:
    """The one-dispatch module for K states and windows of up to `capacity` bars
    (`workgroup`: the HMM module's own constant; `split`: runs of several dispatches, for a
    driver that bounds loops; `subgroups`: the scan's rounds as shuffles, for lanes whose
    threads are one subgroup; `keep_emissions`: shaders/hmm_scan.py's); built once per
    argument set."""
    lt = lane_threads_for(K, lane_threads, capacity, subgroups)
    run = _RUN
    holes = {**(_SPLIT if split else _WHOLE), **(_SUBGROUPS if subgroups else _NO_SUBGROUPS)}
    for hole, text in holes.items():
        run = run.replace(hole, text)
    return (
        hmm_source(K, workgroup, accumulate, private_io=True)
        + scan_source(K, lt, capacity, subgroups, keep_emissions)
        + sampler_functions(workgroup, _DECLARATIONS, dims="DM")
        + run.replace("{LT}", str(lt)).replace("{IT}", str(U_IT))
        .replace("{SCHEDULE}", str(U_SCHEDULE))
    )
