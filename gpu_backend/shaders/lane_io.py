"""WGSL: where each lane's position, log density and gradient live for the HMM's functions.

shaders/hmm.py's functions read a lane's position from `theta` and write its log density
to `out_value` and its gradient (or predictive) to `out_vec`, lane l's at pbase(l) and
vslot(l). In the HMM kernels these are the lanes' buffers, written by the host and read
back. The one-dispatch lane sampler (shaders/lane_sampler.py) moves its lane's trajectory
on one thread for a whole run: there they are that thread's private variables, so that a
leapfrog step's drift, gradient and kick never go through memory. The sampler's functions
(shaders/sampler.py, jump.py) index them the same way, so one source serves both.
"""

from __future__ import annotations

# The lanes' buffers (bindings 2 to 4 of the HMM kernels' group 0).
LANES_IO = """
@group(0) @binding(2) var<storage, read> theta: array<f32>;          // [lanes, D]
@group(0) @binding(3) var<storage, read_write> out_value: array<vec2<f32>>;  // [lanes]
@group(0) @binding(4) var<storage, read_write> out_vec: array<f32>;     // [lanes, D or K+2]
fn pbase(lane: u32) -> u32 { return lane * params.D; }
fn vslot(lane: u32) -> u32 { return lane; }
"""

# One invocation's own: the lane sampler's thread 0, for its lane alone.
PRIVATE_IO = """
var<private> theta: Theta;
var<private> out_value: array<vec2<f32>, 1>;
var<private> out_vec: Theta;
fn pbase(lane: u32) -> u32 { return 0u; }
fn vslot(lane: u32) -> u32 { return 0u; }
"""
