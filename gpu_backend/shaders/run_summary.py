"""WGSL: a run's summary per instrument, beside its draws (regime_model.run_summary).

A workgroup per instrument reads its lanes' draws and each draw's predictive where the
lane sampler left them (shaders/lane_sampler.py's `out` and `pred`) and writes one row:
the means of P(regime) and of the predictive, the sd and the rank-normalised split bulk
ESS of the two decision quantities, and the parameters' variance over the draws. The
host's arithmetic (estimate.py, diagnostics.py) step for step, in float32:

- means and variances in two passes (the mean, then the centred squares), each a sum per
  thread and one tree over the workgroup;
- ranks: the pooled split-chain values bitonic-sorted in workgroup memory (NMAX of them,
  padded with +inf); each value's normal score is looked up by the first + last sorted
  position of its tie, two binary searches in the sorted values (bounded work however
  many draws tie; no index sorted beside the values), in the table of its pooled count
  (diagnostics._scores, uploaded once per count, after the table's 1 / most ESS per
  draw), so ties get the host's average ranks exactly;
- the ESS: diagnostics._ess, the chains' autocovariance by lag and group of chains over
  the threads, then Geyer's initial positive, monotone sequence on thread 0, with the same
  cap on ESS per draw.

An instrument is summarised over its own lanes (first_lane), by one of two modules: the
narrow one (NMAX 256: 4 chains x 40 draws are 160 pooled) and the wide one (NMAX_WIDE
2,048: a wide instrument's 32 chains x 40 are 1,280), each dispatched over every
instrument and taking those of its size. One whose pooled draws exceed what either sorts
gets a row of NaN from the wide pass (from the narrow pass where the device has no wide
one): the host summarises that run (a wide instrument's joined blocks of 64 chains).
"""

from __future__ import annotations

import functools

ENTRY_SUMMARY = "summarise"
WORKGROUP = 64
NMAX = 256  # pooled split-chain draws the narrow module sorts: 4 chains x 40 draws are 160
NMAX_WIDE = 2048  # the wide module's: 32 chains x 40 draws are 1,280
NO_TABLE = 0xFFFFFFFF  # an instrument's score table offset where no module summarises it
# uniform; the draws and energies; the predictive; the score tables; per instrument its
# first lane and its table's offset; the rows
SUMMARY_BINDINGS: tuple[str, ...] = ("uniform", *["read-only-storage"] * 4, "storage")

_SOURCE = """
struct Params {
    instruments: u32,
    S: u32,          // draws per chain
    half: u32,       // S / 2: the split chains' length
    wide: u32,       // 1: a wide module runs too and takes what this one does not sort
}

@group(0) @binding(0) var<uniform> sp: Params;
@group(0) @binding(1) var<storage, read> outv: array<f32>;    // draws [lanes, S, D], energy
@group(0) @binding(2) var<storage, read> pred: array<f32>;    // [lanes, S, K + 2]
@group(0) @binding(3) var<storage, read> scores: array<f32>;  // by first + last of a tie
// [instruments + 1] each instrument's first lane, then [instruments] its score table's offset
@group(0) @binding(4) var<storage, read> first_lane: array<u32>;
@group(0) @binding(5) var<storage, read_write> rows: array<f32>;  // [instruments, NOUT]

const D: u32 = K * (K + 1u);
const NOUT: u32 = K + 6u + D;
const NR: u32 = K + 4u + D;  // sums of a pass: P(regime) [K], mean, second, q [2], draws [D]
const WG: u32 = {wg}u;
const NMAX: u32 = {nmax}u;

var<workgroup> red: array<array<f32, NR>, WG>;
const SMALL: u32 = NMAX / 4u;  // the lags and split chains a module handles
var<workgroup> key: array<f32, NMAX>;  // the pooled values, sorted
var<workgroup> z: array<f32, NMAX>;  // the pooled values in draw order; then their scores
var<workgroup> acov: array<f32, SMALL>;
var<workgroup> cmean: array<f32, SMALL>;
var<workgroup> cvar: array<f32, SMALL>;
var<workgroup> ess_out: array<f32, 2>;

fn reduce(mine: array<f32, NR>, j: u32) -> array<f32, NR> {
    red[j] = mine;
    workgroupBarrier();
    for (var d = WG / 2u; d > 0u; d >>= 1u) {
        if (j < d) {
            for (var i = 0u; i < NR; i++) { red[j][i] += red[j + d][i]; }
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

// decision quantity q (0: P(most turbulent regime), 1: log predictive sd) of draw s of lane
fn quantity(q: u32, lane: u32, s: u32) -> f32 {
    let b = (lane * sp.S + s) * (K + 2u);
    if (q == 0u) { return pred[b + K - 1u]; }
    return 0.5 * log(max(pred[b + K + 1u], 1e-37));
}

// the bulk ESS of quantity q over the instrument's split chains (diagnostics.bulk_ess)
fn bulk_ess(q: u32, first: u32, C: u32, table: u32, j: u32) {
    let h = sp.half;
    let M = 2u * C;
    let n = M * h;
    for (var m = j; m < NMAX; m += WG) {
        if (m < n) {
            let c2 = m / h;
            let t = m % h;
            let s = select(sp.S - h + t, t, c2 < C);
            let v = quantity(q, first + c2 % C, s);
            key[m] = v;
            z[m] = v;
        } else {
            key[m] = 3.0e38;
        }
    }
    workgroupBarrier();
    // bitonic sort of the values alone, a thread per pair (i with bit w clear, i | w)
    for (var k = 2u; k <= NMAX; k <<= 1u) {
        for (var w = k >> 1u; w > 0u; w >>= 1u) {
            for (var pair = j; pair < NMAX / 2u; pair += WG) {
                let i = ((pair & ~(w - 1u)) << 1u) | (pair & (w - 1u));
                let l = i | w;
                let a = key[i];
                let b = key[l];
                if ((a > b) == ((i & k) == 0u)) {
                    key[i] = b;
                    key[l] = a;
                }
            }
            workgroupBarrier();
        }
    }
    // each draw's normal score, in place: its tie's first and last sorted positions
    for (var m = j; m < n; m += WG) {
        let v = z[m];
        var a = 0u;  // lo: the first position holding v
        var b = n - 1u;
        while (a < b) { let c = (a + b) / 2u; if (key[c] < v) { a = c + 1u; } else { b = c; } }
        let lo = a;
        b = n - 1u;  // hi: the last position holding v
        while (a < b) { let c = (a + b + 1u) / 2u; if (key[c] > v) { b = c - 1u; } else { a = c; } }
        z[m] = scores[table + 1u + lo + a];
    }
    workgroupBarrier();
    for (var c = j; c < M; c += WG) {
        var sum = 0.0;
        for (var t = 0u; t < h; t++) { sum += z[c * h + t]; }
        let mean = sum / f32(h);
        var sq = 0.0;
        for (var t = 0u; t < h; t++) { let e = z[c * h + t] - mean; sq += e * e; }
        cmean[c] = mean;
        cvar[c] = sq / f32(h);
    }
    workgroupBarrier();
    // the autocovariance lag by lag, its chains in G groups (every thread busy where the
    // lags are fewer than the threads); the groups' sums, then added in acov[lag]
    let G = max(1u, WG / h);
    for (var slot = j; slot < G * h; slot += WG) {
        let lag = slot % h;
        var sum = 0.0;
        for (var c = slot / h; c < M; c += G) {
            for (var t = 0u; t + lag < h; t++) {
                sum += (z[c * h + t] - cmean[c]) * (z[c * h + t + lag] - cmean[c]);
            }
        }
        acov[slot] = sum;
    }
    workgroupBarrier();
    for (var lag = j; lag < h; lag += WG) {
        var sum = acov[lag];
        for (var g = 1u; g < G; g++) { sum += acov[g * h + lag]; }
        acov[lag] = sum / f32(h * M);
    }
    workgroupBarrier();
    if (j == 0u) {
        var within = 0.0;
        var mbar = 0.0;
        for (var c = 0u; c < M; c++) { within += cvar[c]; mbar += cmean[c]; }
        within = within / f32(M) * f32(h) / f32(h - 1u);
        mbar /= f32(M);
        var between = 0.0;
        for (var c = 0u; c < M; c++) { let e = cmean[c] - mbar; between += e * e; }
        let var_plus = within * f32(h - 1u) / f32(h) + between / f32(M - 1u);
        var total = 0.0;
        var monotone = 3.0e38;
        for (var p = 0u; p + 1u < h; p += 2u) {  // rho's pairs (0, 1), (2, 3), ...
            let r0 = select(1.0 - (within - acov[p]) / var_plus, 1.0, p == 0u);
            let r1 = 1.0 - (within - acov[p + 1u]) / var_plus;
            let pair = r0 + r1;
            if (!(pair > 0.0)) { break; }
            monotone = min(monotone, pair);
            total += monotone;
        }
        let tau = -1.0 + 2.0 * total;
        var ess = f32(n) / max(tau, scores[table]);
        if (!(var_plus > 0.0 && var_plus < 3.0e38)) { ess = 0.0; }
        ess_out[q] = ess;
    }
    workgroupBarrier();
}

// whether a module sorting nm pooled draws summarises an instrument of `lanes` chains
fn fits_in(nm: u32, lanes: u32, table: u32) -> bool {
    return 2u * lanes * sp.half <= nm && 2u * lanes <= nm / 4u && sp.half <= nm / 4u
        && sp.half >= 2u && table != 0xffffffffu;
}

// a row of NaN: the host summarises this instrument's run
fn nan_row(out_row: u32, j: u32) {
    for (var c = j; c < NOUT; c += WG) { rows[out_row + c] = bitcast<f32>(0x7fc00000u); }
}

@compute @workgroup_size(WG)
fn summarise(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = wid.x;
    let j = lid.x;
    if (i >= sp.instruments) { return; }
    let first = first_lane[i];
    let lanes = first_lane[i + 1u] - first;
    let table = first_lane[sp.instruments + 1u + i];
    let rows_n = lanes * sp.S;
    let out_row = i * NOUT;
    let narrow = fits_in({nmax}u, lanes, table);
    if (NMAX == {nmax}u) {
        if (!narrow) {  // the wide module's, or NaN where the device has none
            if (sp.wide == 0u) { nan_row(out_row, j); }
            return;
        }
    } else {
        if (narrow) { return; }  // the narrow module's
        if (!fits_in(NMAX, lanes, table)) { nan_row(out_row, j); return; }
    }
    // pass 1: sums
    var mine: array<f32, NR>;
    for (var r = j; r < rows_n; r += WG) {
        let lane = first + r / sp.S;
        let s = r % sp.S;
        let b = (lane * sp.S + s) * (K + 2u);
        for (var k = 0u; k < K; k++) { mine[k] += pred[b + k]; }
        let m = pred[b + K];
        mine[K] += m;
        mine[K + 1u] += pred[b + K + 1u] + m * m;
        mine[K + 2u] += quantity(0u, lane, s);
        mine[K + 3u] += quantity(1u, lane, s);
        let db = (lane * sp.S + s) * D;
        for (var d = 0u; d < D; d++) { mine[K + 4u + d] += outv[db + d]; }
    }
    let sums = reduce(mine, j);
    let nf = f32(rows_n);
    // pass 2: centred squares of the decision quantities and the draws
    var sq: array<f32, NR>;
    for (var r = j; r < rows_n; r += WG) {
        let lane = first + r / sp.S;
        let s = r % sp.S;
        for (var q = 0u; q < 2u; q++) {
            let e = quantity(q, lane, s) - sums[K + 2u + q] / nf;
            sq[K + 2u + q] += e * e;
        }
        let db = (lane * sp.S + s) * D;
        for (var d = 0u; d < D; d++) {
            let e = outv[db + d] - sums[K + 4u + d] / nf;
            sq[K + 4u + d] += e * e;
        }
    }
    let squares = reduce(sq, j);
    bulk_ess(0u, first, lanes, table, j);
    bulk_ess(1u, first, lanes, table, j);
    if (j == 0u) {
        for (var k = 0u; k < K; k++) { rows[out_row + k] = sums[k] / nf; }
        rows[out_row + K] = sums[K] / nf;
        rows[out_row + K + 1u] = sums[K + 1u] / nf;
        for (var q = 0u; q < 2u; q++) {
            rows[out_row + K + 2u + q] = sqrt(squares[K + 2u + q] / nf);
            rows[out_row + K + 4u + q] = ess_out[q];
        }
        for (var d = 0u; d < D; d++) {
            rows[out_row + K + 6u + d] = squares[K + 4u + d] / (nf - 1.0);
        }
    }
}
"""


@functools.cache
def run_summary_source(K: int, nmax: int = NMAX) -> str:
    """The summary module for K states sorting `nmax` pooled draws (NMAX or NMAX_WIDE; one
    string object per pair: the pipeline cache's key is remembered by identity)."""
    body = (_SOURCE.replace("{wg}", str(WORKGROUP)).replace("const NMAX: u32 = {nmax}u;",
            f"const NMAX: u32 = {nmax}u;").replace("{nmax}", str(NMAX)))  # fmt: skip
    return f"const K: u32 = {K}u;\n" + body


def workgroup_bytes(K: int, nmax: int) -> int:
    """The module's workgroup memory: its sums' tree, the sort's two arrays, the three
    small ones (a device must allow this much to run it)."""
    D = K * (K + 1)
    return 4 * (WORKGROUP * (K + 4 + D) + 2 * nmax + 3 * (nmax // 4) + 2)
