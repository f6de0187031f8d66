"""WGSL of a whole warm sampler run: regime_model.sampler's loop for warm lanes, per lane.

One thread per lane. Per iteration the host records `begin` (momentum from the device
Philox, keyed as regime_model.rng keys it), `steps` x (`drift`, hmm value_grad, `kick`)
and `finish` (Metropolis test with its own Philox uniform, then the step-size search
size during warm-up, or the draw's record while sampling), all in ONE compute pass; each
lane counts its own iteration (`it`) and leapfrog steps (`taken`), so no per-iteration
value has to reach the device between dispatches. The trajectory's position lives in the
HMM kernels' `theta` buffer, its gradient in their `out_vec`, its log density (less the
constant the host adds) in their `out_value` as (hi, lo). The one-dispatch lane sampler
(shaders/lane_sampler.py) runs the same functions on thread 0's own copies of a lane's
state and of these three, indexed the same way (fbase, wbase, pbase, vslot).

Same association as regime_model.hmc and regime_model.adaptation, in float32. Faults
(non-finite values) are judged by their bits: a compiler may assume floats are finite.
"""

from __future__ import annotations

import re

from gpu_backend.shaders.hmm import SOFTPLUS_WGSL
from gpu_backend.shaders.jump import JUMP_WGSL
from gpu_backend.shaders.philox import PHILOX_WGSL

ENTRY_INIT = "init_state"
ENTRY_BEGIN = "begin"
ENTRY_DRIFT = "drift"
ENTRY_KICK = "kick"
ENTRY_FINISH = "finish"
ENTRY_JUMP_PROPOSE, ENTRY_JUMP_FINISH = "jump_propose", "jump_finish"

# Per-lane float state: pos, grad of pos, momentum, inverse mass ([D] each), then these.
# F_SHIFT_SUM: the level-shift move's acceptance probabilities summed over sampling.
F_LP_HI, F_LP_LO, F_K0, F_EPS, F_LOG_STEP, F_ACC_SUM, F_SHIFT_SUM = range(7)
N_SCALARS = 7
# Per-lane u32 state: Philox key (2), the counter's high words (2), then these.
# U_SCHEDULE: the lane's row of the step schedules (a joined batch's lanes follow several:
# regime_model/batch_join.py), read only.
U_IT, U_TAKEN, U_OK, U_DIVERGENT, U_SCHEDULE = 4, 5, 6, 7, 8
N_WORDS = 9

SAMPLER_BINDINGS: tuple[str, ...] = (
    "uniform",
    "storage",
    "read-only-storage",
    "read-only-storage",
    "storage",
    "storage",
    "read-only-storage",
    "storage",
)

_SOURCE = """
const NS: u32 = {NS}u;
const NW: u32 = {NW}u;

struct Sp {
    lanes: u32, D: u32, warmup: u32, draws: u32,
    target_accept: f32,
    // the one-dispatch sampler's returns ring (shaders/lane_sampler.py); chains 0: no ring
    ring_head: u32, instruments: u32, chains: u32,
    shift: u32,  // 1: the level-shift move before every iteration (shaders/jump.py)
    // the one-dispatch sampler's gradient evaluations per dispatch (0: no bound)
    budget: u32, pad1: u32, pad2: u32,
};

{DECLARATIONS}
fn finite(v: f32) -> bool { return (bitcast<u32>(v) & 0x7F800000u) != 0x7F800000u; }
// Where lane l's floats (fbase) and words (wbase) start in `fs` and `us`, and its position
// and gradient (pbase) and log density (vslot) in theta, out_vec and out_value: the
// module's declarations say (the lanes' buffers in the per-step module; in the lane
// sampler thread 0's own copies, shaders/lane_io.py).
fn scalar(l: u32) -> u32 { return fbase(l) + 4u * sp.D; }

fn kinetic(l: u32, p_at: u32) -> f32 {
    let b = fbase(l);
    var k = 0.0;
    for (var d = 0u; d < sp.D; d++) {
        let p = fs[p_at + d];
        k += fs[b + 3u * sp.D + d] * p * p;
    }
    return 0.5 * k;
}

// The starting state's log density and gradient, sanitised like hmc.init.
fn init_lane(l: u32) {
    let b = fbase(l);
    var ok = finite(out_value[vslot(l)].x) && finite(out_value[vslot(l)].y);
    for (var d = 0u; d < sp.D; d++) { ok = ok && finite(out_vec[pbase(l) + d]); }
    for (var d = 0u; d < sp.D; d++) { fs[b + sp.D + d] = select(0.0, out_vec[pbase(l) + d], ok); }
    fs[scalar(l) + {LP_HI}u] = select(0.0, out_value[vslot(l)].x, ok);
    fs[scalar(l) + {LP_LO}u] = select(0.0, out_value[vslot(l)].y, ok);
    us[wbase(l) + {OK}u] = select(0u, 1u, ok);
}

// Momentum ~ N(0, inv_mass^-1) from rng.Purpose.MOMENTUM, kinetic energy, opening half kick.
fn begin_lane(l: u32) {
    let b = fbase(l);
    let u = wbase(l);
    // Iterations count from the start of sampling (sampler._transition), wrapping below 0.
    let iteration = us[u + {IT}u] - sp.warmup;
    let key = vec2<u32>(us[u], us[u + 1u]);
    let pairs = (sp.D + 1u) / 2u;
    let p_at = b + 2u * sp.D;
    for (var m = 0u; m < pairs; m++) {
        let z = normal_pair(philox(vec4<u32>(m, iteration, us[u + 2u], us[u + 3u]), key));
        fs[p_at + m] = z.x / sqrt(fs[b + 3u * sp.D + m]);
        if (m + pairs < sp.D) { fs[p_at + m + pairs] = z.y / sqrt(fs[b + 3u * sp.D + m + pairs]); }
    }
    fs[scalar(l) + {K0}u] = kinetic(l, p_at);
    let eps = fs[scalar(l) + {EPS}u];
    for (var d = 0u; d < sp.D; d++) {
        fs[p_at + d] = fs[p_at + d] + 0.5 * eps * fs[b + sp.D + d];
        theta[pbase(l) + d] = fs[b + d];
    }
    us[u + {TAKEN}u] = 0u;
}

// The lane's leapfrog steps at iteration `it`: steps is [schedules, iterations].
fn steps_at(l: u32, it: u32) -> u32 {
    return steps[us[wbase(l) + {SCHEDULE}u] * (sp.warmup + sp.draws) + it];
}

fn drift_lane(l: u32) {
    if (us[wbase(l) + {TAKEN}u] >= steps_at(l, us[wbase(l) + {IT}u])) { return; }
    let b = fbase(l);
    let eps = fs[scalar(l) + {EPS}u];
    for (var d = 0u; d < sp.D; d++) {
        let i = pbase(l) + d;
        theta[i] = theta[i] + (eps * fs[b + 3u * sp.D + d]) * fs[b + 2u * sp.D + d];
    }
}

fn kick_lane(l: u32) {
    let c = us[wbase(l) + {TAKEN}u];
    let n = steps_at(l, us[wbase(l) + {IT}u]);
    if (c >= n) { return; }
    let eps = fs[scalar(l) + {EPS}u];
    let h = select(eps, 0.5 * eps, c + 1u == n);
    let p_at = fbase(l) + 2u * sp.D;
    for (var d = 0u; d < sp.D; d++) { fs[p_at + d] = fs[p_at + d] + h * out_vec[pbase(l) + d]; }
    us[wbase(l) + {TAKEN}u] = c + 1u;
}
"""

_FINISH = """
struct Outcome { accept: bool, rate: f32, divergent: bool, energy: f32 };

// hmc.step's Metropolis test: delta = H(end) - H(start), u from rng.Purpose.ACCEPT;
// u < exp(-delta) is decided as log u < -delta.
fn metropolis(l: u32, iteration: u32) -> Outcome {
    let b = fbase(l);
    let s = scalar(l);
    let v = out_value[vslot(l)];
    var ok = finite(v.x) && finite(v.y);
    for (var d = 0u; d < sp.D; d++) {
        let i = pbase(l) + d;
        ok = ok && finite(theta[i]) && finite(fs[b + 2u * sp.D + d]) && finite(out_vec[i]);
    }
    let k1 = kinetic(l, b + 2u * sp.D);
    ok = ok && finite(k1);
    let start_ok = us[wbase(l) + {OK}u] == 1u;
    let lp_diff = (v.x - fs[s + {LP_HI}u]) + (v.y - fs[s + {LP_LO}u]);
    let delta = (k1 - fs[s + {K0}u]) - lp_diff;
    let w = philox(vec4<u32>(1u << 24u, iteration, us[wbase(l) + 2u], us[wbase(l) + 3u]),
                   vec2<u32>(us[wbase(l)], us[wbase(l) + 1u]));
    var o: Outcome;
    // Leaving a faulted start: delta = -inf on the host, always accepted.
    o.accept = ok && (!start_ok || delta <= 0.0 || log_uniform_of(w.x, w.y) < -delta);
    o.rate = select(0.0, select(1.0, exp(-max(delta, 0.0)), start_ok), ok);
    o.divergent = !ok || (start_ok && delta > {DIVERGENCE});
    let h0 = fs[s + {K0}u] - (fs[s + {LP_HI}u] + fs[s + {LP_LO}u]);
    o.energy = select(h0, k1 - (v.x + v.y), o.accept);
    return o;
}

// regime_model.step_size.search_update: a warm lane (the device runs no other) searches
// over its whole warm-up, so the update count is the iteration's.
fn step_search(l: u32, it: u32, rate: f32) {
    let s = scalar(l);
    let count = f32(it + 1u);
    let gain = {GAIN} / pow(count + {T0}, {KAPPA});
    let log_step = fs[s + {LOG_STEP}u] + gain * (rate - sp.target_accept);
    fs[s + {LOG_STEP}u] = log_step;
    fs[s + {EPS}u] = exp(log_step);
}

// Set by take_theta: the one-dispatch sampler's thread 0 clears it before a Metropolis test
// and reads whether the lane moved (shaders/lane_sampler.py).
var<private> took_theta: bool;

// The lane moves to `theta`, with the log density and gradient computed there.
fn take_theta(l: u32) {
    took_theta = true;
    let b = fbase(l);
    for (var d = 0u; d < sp.D; d++) {
        fs[b + d] = theta[pbase(l) + d];
        fs[b + sp.D + d] = out_vec[pbase(l) + d];
    }
    fs[scalar(l) + {LP_HI}u] = out_value[vslot(l)].x;
    fs[scalar(l) + {LP_LO}u] = out_value[vslot(l)].y;
    us[wbase(l) + {OK}u] = 1u;
}

fn finish_lane(l: u32) {
    let b = fbase(l);
    let s = scalar(l);
    let it = us[wbase(l) + {IT}u];
    let o = metropolis(l, it - sp.warmup);
    if (o.accept) { take_theta(l); }
    if (it < sp.warmup) {
        step_search(l, it, o.rate);
    } else {
        let draw = l * sp.draws + it - sp.warmup;
        for (var d = 0u; d < sp.D; d++) { out[draw * sp.D + d] = fs[b + d]; }
        out[sp.lanes * sp.draws * sp.D + draw] = o.energy;
        fs[s + {ACC_SUM}u] = fs[s + {ACC_SUM}u] + o.rate;
        us[wbase(l) + {DIVERGENT}u] = us[wbase(l) + {DIVERGENT}u] + select(0u, 1u, o.divergent);
    }
    us[wbase(l) + {IT}u] = it + 1u;
}
"""


# The standalone module's bindings (SAMPLER_BINDINGS); theta, out_value and out_vec are the
# HMM kernels' buffers of the same names, bound here too.
_STANDALONE = """
@group(0) @binding(0) var<uniform> sp: Sp;
@group(0) @binding(1) var<storage, read_write> theta: array<f32>;      // [lanes, D] trajectory
@group(0) @binding(2) var<storage, read> out_value: array<vec2<f32>>;  // [lanes] at theta
@group(0) @binding(3) var<storage, read> out_vec: array<f32>;          // [lanes, D] at theta
@group(0) @binding(4) var<storage, read_write> fs: array<f32>;     // [lanes, 4 D + NS]
@group(0) @binding(5) var<storage, read_write> us: array<u32>;     // [lanes, NW]
@group(0) @binding(6) var<storage, read> steps: array<u32>;        // [iterations]
// draws [lanes, S, D], then energy [lanes, S]
@group(0) @binding(7) var<storage, read_write> out: array<f32>;
fn fbase(l: u32) -> u32 { return l * (4u * sp.D + NS); }
fn wbase(l: u32) -> u32 { return l * NW; }
fn pbase(l: u32) -> u32 { return l * sp.D; }
fn vslot(l: u32) -> u32 { return l; }
"""

# One thread per lane, one dispatch per step (wgpu_sampler records them in one pass): each
# entry point runs its per-lane function on every lane.
_LANE_FUNCTIONS = {
    ENTRY_INIT: "init_lane", ENTRY_BEGIN: "begin_lane", ENTRY_DRIFT: "drift_lane",
    ENTRY_KICK: "kick_lane", ENTRY_FINISH: "finish_lane",
    ENTRY_JUMP_PROPOSE: "jump_propose_lane", ENTRY_JUMP_FINISH: "jump_finish_lane",
}  # fmt: skip


def _entries(workgroup: int) -> str:
    return "".join(
        f"""
@compute @workgroup_size({workgroup})
fn {entry}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    if (gid.x < sp.lanes) {{ {function}(gid.x); }}
}}
"""
        for entry, function in _LANE_FUNCTIONS.items()
    )


def sampler_functions(workgroup: int, declarations: str, dims: str = "sp.D") -> str:
    """Philox and the per-lane sampler steps over `declarations` (the bindings, and where a
    lane's state starts: fbase, wbase). `dims`: the WGSL expression of a lane's parameter
    count; a module built for one K passes its constant, so that the loops over parameters
    unroll and a lane's private state can live in registers (shaders/lane_sampler.py)."""
    from regime_model import hmc, step_size  # noqa: PLC0415 - constants only

    names = {
        "WG": workgroup, "NS": N_SCALARS, "NW": N_WORDS,
        "LP_HI": F_LP_HI, "LP_LO": F_LP_LO, "K0": F_K0, "EPS": F_EPS, "LOG_STEP": F_LOG_STEP,
        "ACC_SUM": F_ACC_SUM, "SHIFT_SUM": F_SHIFT_SUM,
        "IT": U_IT, "TAKEN": U_TAKEN, "OK": U_OK, "DIVERGENT": U_DIVERGENT,
        "SCHEDULE": U_SCHEDULE,
        "DIVERGENCE": f"{hmc.DIVERGENCE_ENERGY:.1f}", "T0": f"{step_size.T0:.1f}",
        "GAIN": f"{step_size.GAIN:.1f}", "KAPPA": f"{step_size.KAPPA}",
    }  # fmt: skip
    source = PHILOX_WGSL + _SOURCE.replace("{DECLARATIONS}", declarations) + _FINISH + JUMP_WGSL
    for name, value in names.items():
        source = source.replace("{" + name + "}", str(value))
    return re.sub(r"\bsp\.D\b", dims, source)


ENTRIES = tuple(_LANE_FUNCTIONS)


def sampler_source(workgroup: int) -> str:
    """The WGSL module of every entry point, constants from regime_model's own."""
    return sampler_functions(workgroup, _STANDALONE) + SOFTPLUS_WGSL + "\n" + _entries(workgroup)
