"""WGSL of the HMM kernels with a workgroup per lane: the window split in time.

shaders/hmm.py runs one thread per lane, so a lane's T forward and T backward steps are
serial and the GPU waits on memory between them. Here a workgroup of LT threads serves
one lane: the lane's window sits in workgroup memory, thread j owns the chunk
[j C, (j + 1) C) of C = ceil(T / LT) bars, and the chunks are joined by an associative
scan, the parallel-in-time forward-backward:

- each thread multiplies its chunk's transfer matrices, M_j = A_t0 ... A_t1-1 with
  A_t = P diag(e_t) (A_0 = diag(e_0): the first message is the uniform start, not a
  transition), normalised by its largest entry after every product (only directions
  matter below);
- an inclusive prefix scan (Hillis-Steele, log2 LT rounds) gives the filtered message at
  the bar before each chunk, alpha ~ 1/K 1' M_0 ... M_j-1, and a suffix scan the backward
  message after it, beta ~ M_j+1 ... M_LT-1 1;
- each thread then runs hmm.py's own forward and backward steps over its chunk from those
  messages (same association, same self-normalising scaling), and the sums over time are
  reduced across the workgroup with the same accumulator (`Acc`).

The normalisers s_t, hence the log likelihood, come from the per-chunk forward pass
started at a filtered message that sums to one, exactly as the serial pass does. With
LT = T every chunk is one bar and this is the pure associative scan; LT is a parameter
so the two ends and the points between them can be measured (docs/benchmarks.md).
Messages scratch is lane-major here ([lanes, T, K]) so a workgroup's writes are close.
"""

from __future__ import annotations

from gpu_backend.shaders.workgroup_sums import WORKGROUP_SUMS

ENTRY_VALUE_GRAD_SCAN = "value_grad_scan"
ENTRY_PREDICTIVE_SCAN = "predictive_scan"
SCAN_ENTRIES = (ENTRY_VALUE_GRAD_SCAN, ENTRY_PREDICTIVE_SCAN)
TMAX = 1024  # the longest window the scan kernels hold in workgroup memory
_WORKGROUP_BYTES = 16_384  # WebGPU's guaranteed workgroup memory

_SOURCE = """
const LT: u32 = {LT}u;
const TMAX: u32 = {TMAX}u;
const KK: u32 = K * K;
alias Mat = array<f32, KK>;

var<workgroup> ys: array<f32, TMAX>;
var<workgroup> mats: array<Mat, LT>;

fn lslot(t: u32, k: u32, lane: u32) -> u32 { return (lane * params.T + t) * K + k; }

fn scaled(r: Mat) -> Mat {
    var top = 0.0;
    for (var i = 0u; i < KK; i++) { top = max(top, r[i]); }
    var out = r;
    if (top > 0.0) { for (var i = 0u; i < KK; i++) { out[i] = r[i] / top; } }
    return out;
}

fn mat_mul(a: Mat, b: Mat) -> Mat {
    var r: Mat;
    for (var i = 0u; i < K; i++) {
        for (var c = 0u; c < K; c++) {
            var s = 0.0;
            for (var k = 0u; k < K; k++) { s += a[i * K + k] * b[k * K + c]; }
            r[i * K + c] = s;
        }
    }
    return scaled(r);
}

// M_j: the product of the chunk's A_t, from the identity.
fn chunk_matrix(m: Model, t0: u32, t1: u32) -> Mat {
    var r: Mat;
    for (var i = 0u; i < KK; i++) { r[i] = select(0.0, 1.0, i % (K + 1u) == 0u); }
    for (var t = t0; t < t1; t++) {
        let e = emit(m, ys[t]);
        var next: Mat;
        for (var i = 0u; i < K; i++) {
            for (var c = 0u; c < K; c++) {
                var s = r[i * K + c];
                if (t > 0u) {
                    s = 0.0;
                    for (var k = 0u; k < K; k++) { s += r[i * K + k] * m.P[k][c]; }
                }
                next[i * K + c] = s * e.rel[c];
            }
        }
        r = scaled(next);
    }
    return r;
}

// The filtered message at the bar before thread j's chunk (uniform for the first chunk).
fn prefix_start(own: Mat, j: u32) -> array<f32, K> {
    mats[j] = own;
    workgroupBarrier();
    for (var d = 1u; d < LT; d <<= 1u) {
        var next = mats[j];
        if (j >= d) { next = mat_mul(mats[j - d], next); }
        workgroupBarrier();
        mats[j] = next;
        workgroupBarrier();
    }
    var u: array<f32, K>;
    var total = 0.0;
    for (var c = 0u; c < K; c++) {
        u[c] = 1.0;
        if (j > 0u) {
            u[c] = 0.0;
            for (var r = 0u; r < K; r++) { u[c] += mats[j - 1u][r * K + c]; }
        }
        total += u[c];
    }
    for (var c = 0u; c < K; c++) { u[c] = u[c] / total; }
    workgroupBarrier();
    return u;
}

// The backward message at the last bar of thread j's chunk, up to scale.
fn suffix_start(own: Mat, j: u32) -> array<f32, K> {
    mats[j] = own;
    workgroupBarrier();
    for (var d = 1u; d < LT; d <<= 1u) {
        var next = mats[j];
        if (j + d < LT) { next = mat_mul(next, mats[j + d]); }
        workgroupBarrier();
        mats[j] = next;
        workgroupBarrier();
    }
    var b: array<f32, K>;
    var top = 0.0;
    for (var r = 0u; r < K; r++) {
        b[r] = 1.0;
        if (j + 1u < LT) {
            b[r] = 0.0;
            for (var c = 0u; c < K; c++) { b[r] += mats[j + 1u][r * K + c]; }
        }
        top = max(top, b[r]);
    }
    for (var r = 0u; r < K; r++) { b[r] = b[r] / top; }
    workgroupBarrier();
    return b;
}

// hmm.py's forward steps over [t0, t1) from the filtered message a0 of bar t0 - 1.
fn forward_chunk(m: Model, lane: u32, a0: array<f32, K>, t0: u32, t1: u32, store: bool) -> Forward {
    var f: Forward;
    f.ll = acc_zero();
    f.a = a0;
    for (var t = t0; t < t1; t++) {
        let e = emit(m, ys[t]);
        var pred = f.a;
        if (t > 0u) { pred = predicted(m, f.a); }
        var s = 0.0;
        for (var k = 0u; k < K; k++) { s += pred[k] * e.rel[k]; }
        for (var k = 0u; k < K; k++) {
            f.a[k] = pred[k] * e.rel[k] / s;
            if (store) { alpha_store[lslot(t, k, lane)] = f.a[k]; }
        }
        f.ll = acc_add(acc_add(f.ll, log(s)), e.log_max);
    }
    return f;
}

fn stored(t: u32, lane: u32) -> array<f32, K> {
    var a: array<f32, K>;
    for (var k = 0u; k < K; k++) { a[k] = alpha_store[lslot(t, k, lane)]; }
    return a;
}

// hmm.py's backward steps over the chunk, from its last bar down; `before` is the
// filtered message of bar t0 - 1 (the chunk's prefix_start).
fn backward_chunk(m: Model, lane: u32, b0: array<f32, K>, before: array<f32, K>,
                  t0: u32, t1: u32) -> Sums {
    var s: Sums;
    for (var i = 0u; i < K; i++) {
        s.gz[i] = acc_zero();
        s.gzz[i] = acc_zero();
        for (var j = 0u; j < K; j++) { s.n[i][j] = acc_zero(); }
    }
    var b = b0;
    var t = t1;
    while (t > t0) {
        t -= 1u;
        let a = stored(t, lane);
        let e = emit(m, ys[t]);
        var g: array<f32, K>;
        var gs = 0.0;
        for (var k = 0u; k < K; k++) { g[k] = a[k] * b[k]; gs += g[k]; }
        for (var k = 0u; k < K; k++) {
            let gk = g[k] / gs;
            s.gz[k] = acc_add(s.gz[k], gk * e.z[k]);
            s.gzz[k] = acc_add(s.gzz[k], gk * (e.z[k] * e.z[k] - 1.0));
        }
        if (t == 0u) { break; }
        var prev = before;
        if (t > t0) { prev = stored(t - 1u, lane); }
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
    }
    return s;
}

struct Chunk { t0: u32, t1: u32 };

// Loads the lane's window into workgroup memory; thread j's chunk of it.
fn load_window(lane: u32, j: u32) -> Chunk {
    for (var t = j; t < params.T; t += LT) { ys[t] = y[t * params.lanes + lane]; }
    workgroupBarrier();
    let C = (params.T + LT - 1u) / LT;
    let t0 = min(j * C, params.T);
    return Chunk(t0, min(t0 + C, params.T));
}

// The lane's log density (less constants) and gradient at theta into out_value and out_vec,
// by the whole workgroup; the window is already in workgroup memory.
fn gradient_at(lane: u32, j: u32, c: Chunk) {
    let m = load_model(lane);
    let own = chunk_matrix(m, c.t0, c.t1);
    let before = prefix_start(own, j);
    let after = suffix_start(own, j);
    let f = forward_chunk(m, lane, before, c.t0, c.t1, true);
    let mine = backward_chunk(m, lane, after, before, c.t0, c.t1);
    let total = reduce(pack(f.ll, mine), j);
    if (j == 0u) { out_value[lane] = acc_split(write_gradient(m, unpack(total), lane, total[0])); }
}

// The filtered message at the last bar (returned by the thread that owns that bar) and the
// log likelihood (to thread 0).
struct Filtered { f: Forward, last: bool };

fn filter_at(lane: u32, j: u32, c: Chunk, m: Model) -> Filtered {
    let before = prefix_start(chunk_matrix(m, c.t0, c.t1), j);
    var out: Filtered;
    out.f = forward_chunk(m, lane, before, c.t0, c.t1, false);
    out.last = c.t0 < c.t1 && c.t1 == params.T;
    return out;
}

@compute @workgroup_size(LT)
fn value_grad_scan(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) j: u32) {
    let lane = wid.y * groups.x + wid.x;
    if (lane >= params.lanes) { return; }
    gradient_at(lane, j, load_window(lane, j));
}

@compute @workgroup_size(LT)
fn predictive_scan(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) j: u32) {
    let lane = wid.y * groups.x + wid.x;
    if (lane >= params.lanes) { return; }
    let m = load_model(lane);
    let out = filter_at(lane, j, load_window(lane, j), m);
    var mine: Totals;
    for (var i = 0u; i < NV; i++) { mine[i] = acc_zero(); }
    mine[0] = out.f.ll;
    let total = reduce(mine, j);
    if (j == 0u) { out_value[lane] = acc_split(total[0]); }
    if (out.last) { write_predictive(m, out.f.a, lane); }
}
"""


def lane_threads_for(K: int, requested: int) -> int:
    """Threads per lane for K states: the request, as far as workgroup memory holds."""
    if requested < 1 or requested & (requested - 1):
        raise ValueError(f"lane threads must be a power of two, got {requested}")
    lt = requested
    while lt > 1 and workgroup_bytes(K, lt) > _WORKGROUP_BYTES:
        lt //= 2
    return lt


def workgroup_bytes(K: int, lane_threads: int) -> int:
    """The window, the scan's matrices and the reduction's sums (8-byte accumulators)."""
    sums = 1 + 2 * K + K * K
    return 4 * TMAX + lane_threads * (4 * K * K + 8 * sums)


def scan_source(K: int, lane_threads: int) -> str:
    """The scan entry points; appended to shaders/hmm.py's module for the same K."""
    lt = lane_threads_for(K, lane_threads)
    return (_SOURCE + WORKGROUP_SUMS).replace("{LT}", str(lt)).replace("{TMAX}", str(TMAX))
