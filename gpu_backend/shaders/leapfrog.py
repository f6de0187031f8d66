"""WGSL of the leapfrog's position (drift) and momentum (kick) updates, one lane each.

A fused trajectory alternates drift -> value_grad (shaders/hmm.py) -> kick in one compute
pass; theta, momentum and the gradient stay in device buffers between dispatches. Each
lane counts its own steps (`taken`), so lanes of different lengths share one pass: a lane
whose trajectory has ended neither drifts nor kicks (its theta, hence its value and
gradient, are held). The momentum enters already half-kicked (done on the host), except
in lanes from `first_open` on, which `open_kick` half-kicks after a value_grad at their
start (a move's proposals, whose gradient the host has not seen: wgpu_leapfrog); the
last kick of each lane is the closing half kick. Same association as regime_model.hmc:
x + (eps * inv_mass) * p and p + (kick * eps) * g.
"""

from __future__ import annotations

ENTRY_DRIFT = "drift_step"
ENTRY_KICK = "kick_step"
ENTRY_OPEN_KICK = "open_kick"

# binding -> buffer binding type (see _SOURCE)
LEAPFROG_BINDINGS: tuple[str, ...] = (
    "uniform",
    "storage",
    "storage",
    "read-only-storage",
    "read-only-storage",
    "read-only-storage",
    "storage",
)

_SOURCE = """
const WG: u32 = {WG}u;

struct Lf { lanes: u32, D: u32, first_open: u32, pad1: u32 };

@group(0) @binding(0) var<uniform> lf: Lf;
@group(0) @binding(1) var<storage, read_write> theta: array<f32>;     // [lanes, D]
@group(0) @binding(2) var<storage, read_write> momentum: array<f32>;  // [lanes, D]
@group(0) @binding(3) var<storage, read> grad: array<f32>;            // [lanes, D]
@group(0) @binding(4) var<storage, read> drift: array<f32>;           // [lanes, D] eps * inv_mass
@group(0) @binding(5) var<storage, read> lane: array<vec2<u32>>;      // (bits of eps, steps)
@group(0) @binding(6) var<storage, read_write> taken: array<u32>;     // [lanes] steps done

@compute @workgroup_size(WG)
fn drift_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let l = gid.x;
    if (l >= lf.lanes || taken[l] >= lane[l].y) { return; }
    let base = l * lf.D;
    for (var d = 0u; d < lf.D; d++) {
        theta[base + d] = theta[base + d] + drift[base + d] * momentum[base + d];
    }
}

@compute @workgroup_size(WG)
fn kick_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let l = gid.x;
    if (l >= lf.lanes) { return; }
    let c = taken[l];
    let n = lane[l].y;
    if (c >= n) { return; }
    let eps = bitcast<f32>(lane[l].x);
    let h = select(eps, 0.5 * eps, c + 1u == n);
    let base = l * lf.D;
    for (var d = 0u; d < lf.D; d++) {
        momentum[base + d] = momentum[base + d] + h * grad[base + d];
    }
    taken[l] = c + 1u;
}

@compute @workgroup_size(WG)
fn open_kick(@builtin(global_invocation_id) gid: vec3<u32>) {
    let l = gid.x;
    if (l >= lf.lanes || l < lf.first_open) { return; }
    let h = 0.5 * bitcast<f32>(lane[l].x);
    let base = l * lf.D;
    for (var d = 0u; d < lf.D; d++) {
        momentum[base + d] = momentum[base + d] + h * grad[base + d];
    }
}
"""


def leapfrog_source(workgroup: int) -> str:
    return _SOURCE.replace("{WG}", str(workgroup))
