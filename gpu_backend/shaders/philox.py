"""WGSL of regime_model.rng: Philox-4x32-10, its uniforms and Box-Muller normals.

The words are bit for bit those of `rng.philox4x32` (WGSL has no 64-bit integers, so the
32x32->64 multiply is built from 16-bit halves). The floats are float32 views of the same
words: `rng.uniform` keeps 53 bits, a float32 keeps 24, so a device uniform is the host's
rounded to float32. Logarithms near u = 1 come from the exact complement 1 - u (an
atanh series), because float32 `log(u)` there loses the digits Box-Muller's radius and the
Metropolis test need. Angles are reduced to [-pi, pi], where WGSL's sin/cos are accurate.
"""

from __future__ import annotations

PHILOX_WGSL = """
const PHILOX_M0: u32 = 0xD2511F53u;
const PHILOX_M1: u32 = 0xCD9E8D57u;
const PHILOX_W: vec2<u32> = vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
const TWO_PI: f32 = 6.283185307179586;

// (high, low) words of the 64-bit product a * b.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xFFFFu;
    let ah = a >> 16u;
    let bl = b & 0xFFFFu;
    let bh = b >> 16u;
    let lh = al * bh;
    let hl = ah * bl;
    let mid = ((al * bl) >> 16u) + (lh & 0xFFFFu) + (hl & 0xFFFFu);
    return vec2<u32>(ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u), a * b);
}

fn philox(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = key;
    for (var r = 0u; r < 10u; r++) {
        if (r > 0u) { k = k + PHILOX_W; }
        let p0 = mulhilo(PHILOX_M0, c.x);
        let p1 = mulhilo(PHILOX_M1, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    }
    return c;
}

// rng.uniform's (bits53 + 0.5) / 2^53 from two words, rounded to f32.
fn uniform_of(w0: u32, w1: u32) -> f32 {
    return f32(w0 >> 5u) * exp2(-27.0) + (f32(w1 >> 6u) + 0.5) * exp2(-53.0);
}

// log of that uniform, accurate near 1 too: from 1 - u = (~bits53 + 0.5) / 2^53.
fn log_uniform_of(w0: u32, w1: u32) -> f32 {
    let v = f32((~w0) >> 5u) * exp2(-27.0) + (f32((~w1) >> 6u) + 0.5) * exp2(-53.0);
    if (v >= 0.125) { return log(uniform_of(w0, w1)); }
    // log(1 - v) = 2 atanh(s), s = -v / (2 - v), |s| < 0.067: five odd terms reach 1e-12.
    let s = -v / (2.0 - v);
    let s2 = s * s;
    return 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (0.2 + s2 * (1.0 / 7.0 + s2 / 9.0))));
}

// Box-Muller on one block's uniform pair: (r cos a, r sin a), as rng.normal pairs them.
fn normal_pair(w: vec4<u32>) -> vec2<f32> {
    let radius = sqrt(-2.0 * log_uniform_of(w.x, w.y));
    // cos(2 pi u) = -cos(2 pi (u - 1/2)): the argument stays in [-pi, pi].
    let angle = TWO_PI * (uniform_of(w.z, w.w) - 0.5);
    return -radius * vec2<f32>(cos(angle), sin(angle));
}
"""

# A test kernel: Philox words, uniforms, log uniforms and normal pairs of given counters.
PHILOX_TEST_WGSL = (
    PHILOX_WGSL
    + """
@group(0) @binding(0) var<storage, read> ctr: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> keys: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> words: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> floats: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&ctr)) { return; }
    let w = philox(ctr[i], keys[i]);
    words[i] = w;
    floats[i] = vec4<f32>(uniform_of(w.x, w.y), log_uniform_of(w.x, w.y), normal_pair(w));
}
"""
)
