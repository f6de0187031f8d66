"""WGSL: hmm.py's model and emissions with the states as vec4 components (K <= 4).

For the scan kernels (shaders/hmm_scan.py): per-state arrays indexed in loops may live in
local memory; vectors and a mat4x4 stay in registers. Padded states never win a max and
have probability 0.
"""

from __future__ import annotations

HMM_VECTORS = """
// The model with the states as vector components (K <= 4: a padded state never wins a max
// and has probability 0) and P as a matrix whose column j is P[., j], so that a * P is the
// row vector a P and P * w the column P w. Vectors stay in registers; hmm.py's per-state
// arrays indexed in loops do not, on every compiler.
struct VModel {
    mu: vec4<f32>, log_sigma: vec4<f32>, inv_sigma: vec4<f32>, on: vec4<f32>,
    P: mat4x4<f32>,
};

fn vmodel(m: Model) -> VModel {
    var v: VModel;
    v.mu = vec4<f32>(0.0);
    v.log_sigma = vec4<f32>(0.0);
    v.inv_sigma = vec4<f32>(0.0);
    v.on = vec4<f32>(0.0);
    var P = mat4x4<f32>();
    for (var k = 0u; k < K; k++) {
        v.mu[k] = m.mu[k];
        v.log_sigma[k] = m.log_sigma[k];
        v.inv_sigma[k] = m.inv_sigma[k];
        v.on[k] = 1.0;
        for (var i = 0u; i < K; i++) { P[k][i] = m.P[i][k]; }
    }
    v.P = P;
    return v;
}

struct VEmit { rel: vec4<f32>, z: vec4<f32>, log_max: f32 };

// hmm.py's emit, as vectors.
fn vemit(v: VModel, yt: f32) -> VEmit {
    var e: VEmit;
    e.z = (vec4<f32>(yt) - v.mu) * v.inv_sigma;
    let le = select(vec4<f32>(-3.0e38), -0.5 * e.z * e.z - v.log_sigma, v.on > vec4<f32>(0.5));
    e.log_max = max(max(le.x, le.y), max(le.z, le.w));
    e.rel = exp(le - vec4<f32>(e.log_max));
    return e;
}

fn to_array(a: vec4<f32>) -> array<f32, K> {
    var out: array<f32, K>;
    for (var k = 0u; k < K; k++) { out[k] = a[k]; }
    return out;
}
"""
