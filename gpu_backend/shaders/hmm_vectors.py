"""WGSL: hmm.py's model and emissions with the states as the components of a vecK.

For the scan kernels (shaders/hmm_scan.py): per-state arrays indexed in loops may live in
local memory; vectors and a KxK matrix stay in registers. The width is K itself (2 to 4,
regime_model.params), not a vec4 padded with empty states: a K = 2 lane's transfer-matrix
products are 8 multiply-adds rather than 64, and the kernel is bound by the length of its
chain of instructions (docs/benchmarks.md, "K-wide scan kernels and a warp per lane").
"""

from __future__ import annotations

COMPONENTS = "xyzw"  # a vector's components, by state

_SOURCE = """
alias SV = vec{K}<f32>;
alias SM = mat{K}x{K}<f32>;

// The model with the states as vector components and P as a matrix whose column j is
// P[., j], so that a * P is the row vector a P and P * w the column P w. Vectors stay in
// registers; hmm.py's per-state arrays indexed in loops do not, on every compiler.
struct VModel { mu: SV, log_sigma: SV, inv_sigma: SV, P: SM };

fn vmodel(m: Model) -> VModel {
    var v: VModel;
    var P = SM();
    for (var k = 0u; k < K; k++) {
        v.mu[k] = m.mu[k];
        v.log_sigma[k] = m.log_sigma[k];
        v.inv_sigma[k] = m.inv_sigma[k];
        for (var i = 0u; i < K; i++) { P[k][i] = m.P[i][k]; }
    }
    v.P = P;
    return v;
}

struct VEmit { rel: SV, z: SV, log_max: f32 };

// hmm.py's emit, as vectors.
fn vemit(v: VModel, yt: f32) -> VEmit {
    var e: VEmit;
    e.z = (SV(yt) - v.mu) * v.inv_sigma;
    let le = -0.5 * e.z * e.z - v.log_sigma;
    e.log_max = vmax(le);
    e.rel = exp(le - SV(e.log_max));
    return e;
}

fn to_array(a: SV) -> array<f32, K> {
    var out: array<f32, K>;
    for (var k = 0u; k < K; k++) { out[k] = a[k]; }
    return out;
}

// The largest component; the largest entry of a matrix.
fn vmax(v: SV) -> f32 { return {VMAX}; }
fn mmax(r: SM) -> f32 { return vmax({MMAX}); }

// The identity; the matrix with column i scaled by e[i] (r diag(e)).
fn identity() -> SM { return SM({IDENTITY}); }
fn scale_columns(r: SM, e: SV) -> SM { return SM({SCALE_COLUMNS}); }
"""


def _nested_max(terms: list[str]) -> str:
    """max(...) of the terms as a balanced tree (short dependency chains)."""
    if len(terms) == 1:
        return terms[0]
    half = (len(terms) + 1) // 2
    return f"max({_nested_max(terms[:half])}, {_nested_max(terms[half:])})"


def vector_source(K: int) -> str:
    """The vector types and helpers for K states (2 to 4: WGSL's vector widths)."""
    if not 2 <= K <= 4:
        raise ValueError(f"the scan kernels take 2 to 4 states, got K = {K}")
    columns = [f"r[{i}]" for i in range(K)]
    ones = [
        "SV(" + ", ".join("1.0" if i == j else "0.0" for j in range(K)) + ")" for i in range(K)
    ]
    fills = {
        "{K}": str(K),
        "{VMAX}": _nested_max([f"v.{c}" for c in COMPONENTS[:K]]),
        "{MMAX}": _nested_max(columns),
        "{IDENTITY}": ", ".join(ones),
        "{SCALE_COLUMNS}": ", ".join(f"r[{i}] * e.{COMPONENTS[i]}" for i in range(K)),
    }
    source = _SOURCE
    for key, value in fills.items():
        source = source.replace(key, value)
    return source
