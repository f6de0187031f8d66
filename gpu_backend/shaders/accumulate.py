"""WGSL of the accumulator `Acc` that sums over time (log likelihood, gradient sums, counts).

f64 where the adapter has `shader-f64` (add/mul/convert only; f64 transcendentals return
garbage on lavapipe, WGPU.md), otherwise compensated f32 (Kahan) with a bit-cast barrier
the driver cannot reassociate through (`params.zero_bits` is 0 at run time).
"""

from __future__ import annotations

from typing import Literal

Accumulate = Literal["f64", "kahan"]

ACC_F64 = """
alias Acc = f64;
fn acc_zero() -> Acc { return f64(0.0); }
fn acc_add(a: Acc, x: f32) -> Acc { return a + f64(x); }
fn acc_f32(a: Acc) -> f32 { return f32(a); }
fn acc_split(a: Acc) -> vec2<f32> { let hi = f32(a); return vec2<f32>(hi, f32(a - f64(hi))); }
fn acc_sum(a: Acc, b: Acc) -> Acc { return a + b; }
fn acc_residual(a: Acc, p: f32, b: Acc) -> f32 { return f32(a - f64(p) * b); }

// K sums at once (one per state), for the vectorised kernels.
alias AccV = vec{K}<f64>;
fn accv_zero() -> AccV { return AccV(0.0); }
fn accv_add(a: AccV, x: vec{K}<f32>) -> AccV { return a + AccV(x); }
fn accv_at(a: AccV, k: u32) -> Acc { return a[k]; }
"""

ACC_KAHAN = """
alias Acc = vec2<f32>;  // (sum, compensation)
fn opaque(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ params.zero_bits); }
fn acc_zero() -> Acc { return vec2<f32>(0.0, 0.0); }
fn acc_add(a: Acc, x: f32) -> Acc {
    let v = x - a.y;
    let s = opaque(a.x + v);
    return vec2<f32>(s, opaque(s - a.x) - v);
}
fn acc_f32(a: Acc) -> f32 { return a.x - a.y; }
fn acc_split(a: Acc) -> vec2<f32> { return vec2<f32>(a.x, -a.y); }
fn acc_sum(a: Acc, b: Acc) -> Acc { return acc_add(acc_add(a, b.x), -b.y); }
fn acc_residual(a: Acc, p: f32, b: Acc) -> f32 { return (a.x - p * b.x) - (a.y - p * b.y); }

// K sums at once (one per state), for the vectorised kernels.
struct AccV { s: vec{K}<f32>, c: vec{K}<f32> };
fn opaque_v(x: vec{K}<f32>) -> vec{K}<f32> {
    return bitcast<vec{K}<f32>>(bitcast<vec{K}<u32>>(x) ^ vec{K}<u32>(params.zero_bits));
}
fn accv_zero() -> AccV { return AccV(vec{K}<f32>(0.0), vec{K}<f32>(0.0)); }
fn accv_add(a: AccV, x: vec{K}<f32>) -> AccV {
    let v = x - a.c;
    let s = opaque_v(a.s + v);
    return AccV(s, opaque_v(s - a.s) - v);
}
fn accv_at(a: AccV, k: u32) -> Acc { return vec2<f32>(a.s[k], a.c[k]); }
"""
