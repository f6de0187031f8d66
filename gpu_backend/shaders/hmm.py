"""WGSL of the batched Gaussian HMM: log density + exact gradient, and the predictive.

One invocation per lane, all lanes in one dispatch. y is time-major, y[t, r] at t * rows + r;
lane l reads column l / per_row (a run's draws share their chain's window, uploaded once).
The forward pass stores each lane's normalised filtered messages (scratch [T, K, lanes]);
the backward pass re-derives emissions from y and walks back with self-normalising scaled
messages, as `regime_model.hmm.forward_backward` defines marginals and transition counts.

Arithmetic is f32. Sums over time (log likelihood, gradient sums, transition counts) go
through an accumulator `Acc`: f64 where the adapter has `shader-f64` (add/mul/convert
only; f64 transcendentals return garbage on lavapipe, WGPU.md), otherwise compensated f32
(Kahan) with a bit-cast barrier the driver cannot reassociate through. Constants that do
not depend on the data (-T/2 log 2 pi, the priors' normalisers) are added on the host.
"""

from __future__ import annotations

from gpu_backend.shaders.accumulate import ACC_F64, ACC_KAHAN, Accumulate
from gpu_backend.shaders.lane_io import LANES_IO, PRIVATE_IO

ENTRY_VALUE_GRAD = "value_grad"
ENTRY_PREDICTIVE = "predictive"

# log(1 + e^x) without overflow; one definition for every module that needs it (the
# per-step sampler's module, which has no HMM kernels, takes it for the level-shift move).
SOFTPLUS_WGSL = "fn softplus(x: f32) -> f32 { return max(x, 0.0) + log(1.0 + exp(-abs(x))); }"

_COMMON = """
const K: u32 = {K}u;
const WG: u32 = {WG}u;

struct Params {
    lanes: u32, T: u32, D: u32, zero_bits: u32,
    mu_loc: f32, mu_scale: f32, ls_loc: f32, ls_scale: f32,
    eta_loc: f32, eta_scale: f32, alpha_stay: f32, alpha_move: f32,
    per_row: u32, rows: u32, pad0: u32, pad1: u32,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;  // [T, rows]: lane l, column l / per_row
{LANE_IO}
@group(0) @binding(5) var<storage, read_write> alpha_store: array<f32>; // [T, K, lanes]

const DM: u32 = K * K + K;  // parameters of one lane (regime_model.params.n_params)
alias Theta = array<f32, DM>;

struct Model {
    mu: array<f32, K>,
    log_sigma: array<f32, K>,
    inv_sigma: array<f32, K>,
    P: array<array<f32, K>, K>,
    log_P: array<array<f32, K>, K>,
};

struct Emit { rel: array<f32, K>, z: array<f32, K>, log_max: f32 };

{SOFTPLUS}
fn sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }

fn load_model(lane: u32) -> Model {
    var x: Theta;
    for (var d = 0u; d < DM; d++) { x[d] = theta[pbase(lane) + d]; }
    return model_of(x);
}

fn model_of(x: Theta) -> Model {
    var m: Model;
    var ls = x[K];
    for (var k = 0u; k < K; k++) {
        m.mu[k] = x[k];
        if (k > 0u) { ls += softplus(x[K + k]); }
        m.log_sigma[k] = ls;
        m.inv_sigma[k] = exp(-ls);
    }
    var u = 2u * K;
    for (var i = 0u; i < K; i++) {
        var logits: array<f32, K>;
        var top = 0.0;
        for (var j = 0u; j < K; j++) {
            logits[j] = 0.0;
            if (j != i) { logits[j] = x[u]; u++; }
            top = max(top, logits[j]);
        }
        var total = 0.0;
        for (var j = 0u; j < K; j++) { total += exp(logits[j] - top); }
        let lse = top + log(total);
        for (var j = 0u; j < K; j++) {
            m.log_P[i][j] = logits[j] - lse;
            m.P[i][j] = exp(m.log_P[i][j]);
        }
    }
    return m;
}

// Emissions relative to their max over states (log N without the -log(2 pi)/2 constant).
fn emit(m: Model, yt: f32) -> Emit {
    var e: Emit;
    var le: array<f32, K>;
    e.log_max = -3.0e38;
    for (var k = 0u; k < K; k++) {
        e.z[k] = (yt - m.mu[k]) * m.inv_sigma[k];
        le[k] = -0.5 * e.z[k] * e.z[k] - m.log_sigma[k];
        e.log_max = max(e.log_max, le[k]);
    }
    for (var k = 0u; k < K; k++) { e.rel[k] = exp(le[k] - e.log_max); }
    return e;
}

fn predicted(m: Model, a: array<f32, K>) -> array<f32, K> {
    var pred: array<f32, K>;
    for (var j = 0u; j < K; j++) {
        var s = 0.0;
        for (var i = 0u; i < K; i++) { s += a[i] * m.P[i][j]; }
        pred[j] = s;
    }
    return pred;
}

fn slot(t: u32, k: u32, lane: u32) -> u32 { return (t * K + k) * params.lanes + lane; }
struct Forward { a: array<f32, K>, ll: Acc };

// Filtered messages a_t and sum_t log p(y_t | y_<t) (less the constant) over column `column`
// of y; optionally stored. (The gradient passes column = lane, which lavapipe loads
// contiguously; lane / per_row, even computed once, made them gathers and it slower.)
fn forward(m: Model, lane: u32, column: u32, store: bool) -> Forward {
    var f: Forward;
    f.ll = acc_zero();
    for (var k = 0u; k < K; k++) { f.a[k] = 1.0 / f32(K); }
    for (var t = 0u; t < params.T; t++) {
        let e = emit(m, y[t * params.rows + column]);
        var pred = f.a;
        if (t > 0u) { pred = predicted(m, f.a); }
        var s = 0.0;
        for (var k = 0u; k < K; k++) { s += pred[k] * e.rel[k]; }
        for (var k = 0u; k < K; k++) {
            f.a[k] = pred[k] * e.rel[k] / s;
            if (store) { alpha_store[slot(t, k, lane)] = f.a[k]; }
        }
        f.ll = acc_add(acc_add(f.ll, log(s)), e.log_max);
    }
    return f;
}
"""

_VALUE_GRAD = """
struct Sums {
    gz: array<Acc, K>,        // sum_t gamma_t(k) z_t(k)
    gzz: array<Acc, K>,       // sum_t gamma_t(k) (z_t(k)^2 - 1)
    n: array<array<Acc, K>, K>,  // expected transition counts
};

fn load_alpha(t: u32, lane: u32) -> array<f32, K> {
    var a: array<f32, K>;
    for (var k = 0u; k < K; k++) { a[k] = alpha_store[slot(t, k, lane)]; }
    return a;
}

fn backward(m: Model, lane: u32) -> Sums {
    var s: Sums;
    for (var i = 0u; i < K; i++) {
        s.gz[i] = acc_zero();
        s.gzz[i] = acc_zero();
        for (var j = 0u; j < K; j++) { s.n[i][j] = acc_zero(); }
    }
    var b: array<f32, K>;
    for (var k = 0u; k < K; k++) { b[k] = 1.0; }
    var a = load_alpha(params.T - 1u, lane);
    for (var t = params.T - 1u; ; t--) {
        let e = emit(m, y[t * params.rows + lane]);  // per_row 1
        var g: array<f32, K>;
        var gs = 0.0;
        for (var k = 0u; k < K; k++) { g[k] = a[k] * b[k]; gs += g[k]; }
        for (var k = 0u; k < K; k++) {
            let gk = g[k] / gs;
            s.gz[k] = acc_add(s.gz[k], gk * e.z[k]);
            s.gzz[k] = acc_add(s.gzz[k], gk * (e.z[k] * e.z[k] - 1.0));
        }
        if (t == 0u) { break; }
        let prev = load_alpha(t - 1u, lane);
        let pred = predicted(m, prev);
        var w: array<f32, K>;
        var den = 0.0;
        for (var j = 0u; j < K; j++) { w[j] = e.rel[j] * b[j]; den += pred[j] * w[j]; }
        for (var j = 0u; j < K; j++) { w[j] = w[j] / den; }
        for (var i = 0u; i < K; i++) {
            var bi = 0.0;
            for (var j = 0u; j < K; j++) {
                let pw = m.P[i][j] * w[j];
                s.n[i][j] = acc_add(s.n[i][j], prev[i] * pw);
                bi += pw;
            }
            b[i] = bi;
        }
        a = prev;
    }
    return s;
}

fn alpha_prior(i: u32, j: u32) -> f32 {
    return select(params.alpha_move, params.alpha_stay, i == j);
}

// Pulls the sums back to theta, adds the prior's gradient; returns the prior's value terms.
fn write_gradient(m: Model, s: Sums, lane: u32, value: Acc) -> Acc {
    let base = pbase(lane);
    var v = value;
    for (var k = 0u; k < K; k++) {
        let zp = (m.mu[k] - params.mu_loc) / params.mu_scale;
        out_vec[base + k] = m.inv_sigma[k] * acc_f32(s.gz[k]) - zp / params.mu_scale;
        v = acc_add(v, -0.5 * zp * zp);
    }
    var upper = 0.0;
    for (var kk = 0u; kk < K; kk++) {
        let k = K - 1u - kk;
        upper += acc_f32(s.gzz[k]);
        let x = theta[base + K + k];
        var loc = params.eta_loc;
        var scale = params.eta_scale;
        var pull = upper;
        if (k == 0u) { loc = params.ls_loc; scale = params.ls_scale; }
        else { pull = sigmoid(x) * upper; }
        let zp = (x - loc) / scale;
        out_vec[base + K + k] = pull - zp / scale;
        v = acc_add(v, -0.5 * zp * zp);
    }
    var u = base + 2u * K;
    for (var i = 0u; i < K; i++) {
        var row = acc_zero();
        var counts: array<Acc, K>;
        for (var j = 0u; j < K; j++) {
            counts[j] = acc_add(s.n[i][j], alpha_prior(i, j));
            row = acc_sum(row, counts[j]);
            v = acc_add(v, alpha_prior(i, j) * m.log_P[i][j]);
        }
        for (var j = 0u; j < K; j++) {
            if (j != i) { out_vec[u] = acc_residual(counts[j], m.P[i][j], row); u++; }
        }
    }
    return v;
}

@compute @workgroup_size(WG)
fn value_grad(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lane = gid.x;
    if (lane >= params.lanes) { return; }
    let m = load_model(lane);
    let f = forward(m, lane, lane, true);  // per_row 1: rows == lanes
    let s = backward(m, lane);
    out_value[vslot(lane)] = acc_split(write_gradient(m, s, lane, f.ll));
}
"""

_PREDICTIVE = """
struct Predictive { a: array<f32, K>, mean: f32, var_: f32 };

// The next return's predictive mean and variance under the filtered message `a` of the
// last bar.
fn predictive_of(m: Model, a: array<f32, K>) -> Predictive {
    let w = predicted(m, a);
    var p: Predictive;
    p.a = a;
    p.mean = 0.0;
    var second = 0.0;
    for (var k = 0u; k < K; k++) {
        p.mean += w[k] * m.mu[k];
        second += w[k] * (exp(2.0 * m.log_sigma[k]) + m.mu[k] * m.mu[k]);
    }
    p.var_ = max(second - p.mean * p.mean, 0.0);
    return p;
}

fn write_predictive(m: Model, a: array<f32, K>, lane: u32) {
    let p = predictive_of(m, a);
    let base = lane * (K + 2u);
    for (var k = 0u; k < K; k++) { out_vec[base + k] = p.a[k]; }
    out_vec[base + K] = p.mean;
    out_vec[base + K + 1u] = p.var_;
}

@compute @workgroup_size(WG)
fn predictive(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lane = gid.x;
    if (lane >= params.lanes) { return; }
    let m = load_model(lane);
    let f = forward(m, lane, lane / params.per_row, false);
    write_predictive(m, f.a, lane);
    out_value[vslot(lane)] = acc_split(f.ll);
}
"""


def hmm_source(K: int, workgroup: int, accumulate: Accumulate, private_io: bool = False) -> str:
    """The WGSL module (both entry points) for K states; array sizes need code generation.
    `private_io`: theta, out_value and out_vec private to the invocation (shaders/lane_io.py), for
    the lane sampler, which uses none of this module's entry points."""
    acc = ACC_F64 if accumulate == "f64" else ACC_KAHAN
    common = _COMMON.replace("{K}", str(K)).replace("{WG}", str(workgroup))
    common = common.replace("{LANE_IO}", PRIVATE_IO if private_io else LANES_IO)
    common = common.replace("{SOFTPLUS}", SOFTPLUS_WGSL)
    return common + acc.replace("{K}", str(K)) + _VALUE_GRAD + _PREDICTIVE
