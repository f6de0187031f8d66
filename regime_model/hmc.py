"""Static-length HMC over a batch of lanes that move in lockstep (blackjax-style contract).

`init(position, logdensity_fn) -> HMCState`; `step(key, state, params, logdensity_fn,
num_steps) -> (HMCState, HMCInfo)`. HMCState is what a checkpoint carries, HMCInfo what a
log or an adaptation carries. Every lane has its own step size and diagonal inverse mass,
and either all lanes take the same number of leapfrog steps (an int) or each its own (an
array [L]); one batched log-density call serves every lane at each step, and a lane whose
trajectory has ended stays put (masked) while the longest one finishes. A non-finite log
density or gradient is a divergent, rejected transition for that lane, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple, TypeVar

import numpy as np

from regime_model import rng
from regime_model.types import (
    BoolArray,
    FloatArray,
    IntArray,
    LogDensityFn,
    MovedTrajectoryFn,
    Trajectory,
    TrajectoryFn,
)

# Energy error beyond which a trajectory counts as divergent (Stan's threshold).
DIVERGENCE_ENERGY = 1000.0


class HMCState(NamedTuple):
    position: FloatArray  # [L, D]
    logdensity: FloatArray  # [L], -inf where the density was not finite
    grad: FloatArray  # [L, D], zero where the density was not finite


class HMCParams(NamedTuple):
    step_size: FloatArray  # [L]
    inv_mass: FloatArray  # [L, D] diagonal of the inverse mass matrix


class HMCInfo(NamedTuple):
    acceptance_rate: FloatArray  # [L] min(1, exp(-energy error)); 0 where not finite
    is_accepted: BoolArray  # [L]
    is_divergent: BoolArray  # [L]
    energy: FloatArray  # [L] Hamiltonian of the state kept
    num_steps: int  # batched log-density calls: the longest lane's leapfrog steps
    lane_steps: IntArray  # [L] leapfrog steps of each lane
    proposal: FloatArray  # [L, D] end of the trajectory, before accept/reject
    proposal_momentum: FloatArray  # [L, D]


@dataclass(frozen=True)
class FusedDensity:
    """A log density that comes with its own trajectories: a backend's device trajectory
    (one submission each), or the split integrator of a whitened density (`fit`).

    Called, it is the plain LogDensityFn; `step` hands its trajectories to `leapfrog`;
    `moved`, where given, runs a transition's two candidate trajectories round a move at
    once (jump_move.transition).
    """

    value_and_grad: LogDensityFn
    leapfrog: TrajectoryFn
    moved: MovedTrajectoryFn | None = None

    def __call__(self, position: FloatArray) -> tuple[FloatArray, FloatArray]:
        return self.value_and_grad(position)


class Key(NamedTuple):
    """Randomness of one transition: the lanes' streams at one iteration."""

    stream: rng.Stream
    iteration: int
    # The same numbers drawn ahead for a block of iterations (transition_keys), or None:
    # drawn here from the stream.
    momentum: FloatArray | None = None  # [L, D] standard normals, rng.Purpose.MOMENTUM
    accept: FloatArray | None = None  # [L] uniforms, rng.Purpose.ACCEPT


def sanitise(logp: FloatArray, grad: FloatArray) -> tuple[FloatArray, FloatArray]:
    ok = np.isfinite(logp) & np.isfinite(grad).all(axis=1)
    return np.where(ok, logp, -np.inf), np.where(ok[:, None], grad, 0.0)


def evaluate(logdensity_fn: LogDensityFn, position: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The log density and gradient with every numerical fault mapped to logp = -inf."""
    with np.errstate(all="ignore"):
        return sanitise(*logdensity_fn(position))


def init(position: FloatArray, logdensity_fn: LogDensityFn) -> HMCState:
    position = np.array(position, dtype=np.float64)
    return HMCState(position, *evaluate(logdensity_fn, position))


LaneArrays = TypeVar("LaneArrays", bound=tuple[FloatArray, ...])


def select(mask: BoolArray, new: LaneArrays, old: LaneArrays) -> LaneArrays:
    """Each lane's fields from `new` where `mask`, else from `old`: any NamedTuple of
    per-lane arrays ([L] or [L, ...]), such as an HMCState or a Welford window."""
    picked = (np.where(mask if o.ndim == 1 else mask[:, None], n, o)
              for n, o in zip(new, old, strict=True))
    return type(old)(*picked)


def _kinetic(momentum: FloatArray, inv_mass: FloatArray) -> FloatArray:
    energy: FloatArray = 0.5 * (inv_mass * momentum**2).sum(axis=1)
    return energy


Drift = Callable[[FloatArray, FloatArray, BoolArray], tuple[FloatArray, FloatArray]]
Force = Callable[[FloatArray, FloatArray], FloatArray]


def _integrate(
    fn: LogDensityFn,
    position: FloatArray,
    momentum: FloatArray,
    grad: FloatArray,
    step_size: FloatArray,
    n: IntArray,
    drift: Drift,
    force: Force,
) -> Trajectory:
    """n[l] >= 1 steps per lane of kick (force), drift, kick, inner half-kicks fused.

    After its last step a lane's drift and kick coefficients are zero and its log density
    and gradient are held, so it ends exactly where a solo run of n[l] steps would.
    `drift(x, p, moving)` moves the lanes `moving` ([L, 1]); `force(x, grad)` is what kicks.
    """
    eps = step_size[:, None]
    x, g, logp = position, grad, np.full(len(position), -np.inf)
    p = momentum + 0.5 * eps * force(x, g)
    with np.errstate(all="ignore"):  # faults surface as non-finite values, judged by `step`
        for i in range(int(n.max())):
            moving = i < n
            x, p = drift(x, p, moving[:, None])
            new_logp, new_g = fn(x)
            logp = np.where(moving, new_logp, logp)
            g = np.where(moving[:, None], new_g, g)
            kick = np.where(i == n - 1, 0.5, np.where(moving, 1.0, 0.0))
            p = p + (kick[:, None] * eps) * force(x, g)
    return Trajectory(x, p, logp, g)


def host_leapfrog(
    fn: LogDensityFn,
    position: FloatArray,
    momentum: FloatArray,
    grad: FloatArray,
    step_size: FloatArray,
    inv_mass: FloatArray,
    n: IntArray,
) -> Trajectory:
    """n[l] >= 1 leapfrog steps per lane (see `_integrate`)."""
    eps = step_size[:, None]

    def drift(x: FloatArray, p: FloatArray, moving: BoolArray) -> tuple[FloatArray, FloatArray]:
        return x + (moving * eps) * inv_mass * p, p

    return _integrate(fn, position, momentum, grad, step_size, n, drift, lambda x, g: g)


def split_leapfrog(
    fn: LogDensityFn,
    position: FloatArray,
    momentum: FloatArray,
    grad: FloatArray,
    step_size: FloatArray,
    inv_mass: FloatArray,
    n: IntArray,
) -> Trajectory:
    """n[l] >= 1 steps of the integrator split around the unit Gaussian N(0, I).

    The Hamiltonian's Gaussian part, |x|^2 / 2 + p M^-1 p / 2, flows exactly (each
    coordinate rotates at angular frequency sqrt(inv_mass)); only the residual force,
    grad log p(x) + x, is integrated by half kicks (Shahbaba, Lan, Johnson and Neal 2014,
    "Split Hamiltonian Monte Carlo"). Volume-preserving and reversible like the leapfrog,
    so the Metropolis test keeps the target exact. In a space whitened by the posterior's
    Laplace approximation the residual is small: one step of a quarter period (pi / 2)
    still accepts, and lands nearly independent of where it started, for ONE gradient.
    """
    omega = np.sqrt(inv_mass)
    cos, sin = np.cos(step_size[:, None] * omega), np.sin(step_size[:, None] * omega)

    def rotate(x: FloatArray, p: FloatArray, moving: BoolArray) -> tuple[FloatArray, FloatArray]:
        return (np.where(moving, x * cos + p * (omega * sin), x),
                np.where(moving, p * cos - x * (sin / omega), p))  # fmt: skip

    return _integrate(fn, position, momentum, grad, step_size, n, rotate, lambda x, g: g + x)


def _leapfrog(
    state: HMCState, momentum: FloatArray, params: HMCParams, fn: LogDensityFn, n: IntArray
) -> Trajectory:
    """The trajectory on the host, or on the device of a FusedDensity (same math)."""
    trajectory = fn.leapfrog if isinstance(fn, FusedDensity) else partial(host_leapfrog, fn)
    return trajectory(state.position, momentum, state.grad, params.step_size, params.inv_mass, n)


def step(
    key: Key,
    state: HMCState,
    params: HMCParams,
    logdensity_fn: LogDensityFn,
    num_steps: int | IntArray,
) -> tuple[HMCState, HMCInfo]:
    """One Metropolis-corrected HMC transition for every lane."""
    lane_steps, momentum = begin(key, params, num_steps)
    trajectory = _leapfrog(state, momentum, params, logdensity_fn, lane_steps)
    return finish(key, state, params, momentum, lane_steps, trajectory)


def begin(key: Key, params: HMCParams, num_steps: int | IntArray) -> tuple[IntArray, FloatArray]:
    """A transition's leapfrog steps per lane and its momentum (neither depends on where
    the lanes are)."""
    L, D = params.inv_mass.shape
    lane_steps = np.broadcast_to(np.maximum(np.asarray(num_steps, dtype=np.int64), 1), (L,))
    normals = key.momentum
    if normals is None:
        normals = rng.normal(key.stream, key.iteration, rng.Purpose.MOMENTUM, D)
    return lane_steps, normals / np.sqrt(params.inv_mass)


def finish(
    key: Key,
    state: HMCState,
    params: HMCParams,
    momentum: FloatArray,
    lane_steps: IntArray,
    trajectory: Trajectory,
) -> tuple[HMCState, HMCInfo]:
    """The Metropolis test of `trajectory`, run from `state` with `momentum`."""
    h0 = _kinetic(momentum, params.inv_mass) - state.logdensity
    x, p, logp, g = trajectory
    with np.errstate(all="ignore"):
        ok = np.isfinite(x).all(axis=1) & np.isfinite(p).all(axis=1)
        logp, g = sanitise(np.where(ok, logp, np.nan), g)
        h1 = _kinetic(p, params.inv_mass) - logp
        delta = h1 - h0  # +inf for a faulted proposal; -inf when leaving a faulted state
        rate = np.where(np.isnan(delta), 0.0, np.exp(-np.maximum(delta, 0.0)))
    u = key.accept
    if u is None:
        u = rng.uniform(key.stream, key.iteration, rng.Purpose.ACCEPT, 1)[:, 0]
    accept = (u < rate) & np.isfinite(h1)
    divergent = ~np.isfinite(h1) | (delta > DIVERGENCE_ENERGY)
    new = HMCState(
        np.where(accept[:, None], x, state.position),
        np.where(accept, logp, state.logdensity),
        np.where(accept[:, None], g, state.grad),
    )
    energy = np.where(accept, h1, h0)
    info = HMCInfo(rate, accept, divergent, energy, int(lane_steps.max()), lane_steps.copy(), x, p)
    return new, info
