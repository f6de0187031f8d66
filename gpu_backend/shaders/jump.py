"""WGSL of regime_model.level_shift's map and regime_model.jump_move's Metropolis test.

A lane's move, in two halves around a value_grad at `theta`: `jump_propose_lane` writes
the shifted position there (direction: the top bit of the first Philox word of
rng.Purpose.SHIFT, which is exactly the host's uniform < 1/2); `jump_finish_lane` accepts
it when log u (from the second pair of words) < log p(theta') - log p(theta), as
jump_move.jumped does, or when the lane's state is faulted and the proposal is not, and
while sampling sums the move's acceptance probability (regime_model.readings reads it). The
iteration counts from the start of sampling, as begin_lane's does. Over the sampler's
state layout (shaders/sampler.py), whose functions it uses, and
shaders/hmm.py's softplus (SOFTPLUS_WGSL: a module includes it once).
"""

from __future__ import annotations

from regime_model.rng import Purpose

JUMP_WGSL = """
// K from D = K (K + 1): regime_model.params.n_params.
fn n_states_of(D: u32) -> u32 {
    var k = 2u;
    while (k * k + k < D) { k++; }
    return k;
}

// Index of the transition logit u[a, b] (row-major, b != a) in theta's last K (K - 1).
fn logit_cell(a: u32, b: u32, K: u32) -> u32 { return a * (K - 1u) + select(b - 1u, b, b < a); }

fn jump_words(l: u32) -> vec4<u32> {
    let u = wbase(l);
    let iteration = us[u + {IT}u] - sp.warmup;
    return philox(vec4<u32>({SHIFT}u << 24u, iteration, us[u + 2u], us[u + 3u]),
                  vec2<u32>(us[u], us[u + 1u]));
}

fn jump_propose_lane(l: u32) {
    let b = fbase(l);
    let t = pbase(l);
    let K = n_states_of(sp.D);
    let E = K - 1u;  // the sigma gaps eta
    let up = (jump_words(l).x & 0x80000000u) == 0u;
    let s = select(K - 1u, 1u, up);  // state k takes state (k + s) mod K's parameters
    let r = select(E - 1u, 1u, up);  // gap i takes gap (i + r) mod E
    for (var k = 0u; k < K; k++) { theta[t + k] = fs[b + (k + s) % K]; }
    for (var i = 0u; i < E; i++) { theta[t + K + 1u + i] = fs[b + K + 1u + (i + r) % E]; }
    let gap = select(-softplus(fs[b + K + E]), softplus(fs[b + K + 1u]), up);
    theta[t + K] = fs[b + K] + gap;
    for (var i = 0u; i < K; i++) {
        for (var j = 0u; j < K; j++) {
            if (j != i) {
                let src = logit_cell((i + s) % K, (j + s) % K, K);
                theta[t + 2u * K + logit_cell(i, j, K)] = fs[b + 2u * K + src];
            }
        }
    }
}

fn jump_finish_lane(l: u32) {
    let s = scalar(l);
    let v = out_value[vslot(l)];
    var ok = finite(v.x) && finite(v.y);
    for (var d = 0u; d < sp.D; d++) {
        ok = ok && finite(theta[pbase(l) + d]) && finite(out_vec[pbase(l) + d]);
    }
    let w = jump_words(l);
    let gain = (v.x - fs[s + {LP_HI}u]) + (v.y - fs[s + {LP_LO}u]);
    let start_ok = us[wbase(l) + {OK}u] == 1u;
    // While sampling, the move's acceptance probability min(1, exp(gain)) adds to the
    // lane's sum (jump_move.jumped's rate: 1 leaving a faulted start, 0 to a faulted end).
    if (us[wbase(l) + {IT}u] >= sp.warmup) {
        let rate = select(0.0, select(1.0, exp(min(gain, 0.0)), start_ok), ok);
        fs[s + {SHIFT_SUM}u] = fs[s + {SHIFT_SUM}u] + rate;
    }
    if (ok && (!start_ok || log_uniform_of(w.z, w.w) < gain)) { take_theta(l); }
}
""".replace("{SHIFT}", str(int(Purpose.SHIFT)))
