"""Full sampler runs on two backends, compared within Monte Carlo error.

Each backend runs `regime_model.update.refresh` on the same returns with R independent
seeds; every refresh is one posterior-mean estimate per instrument. For each decision
quantity (P(most turbulent regime) at the last bar, log predictive sd) the difference of
the backends' mean estimates is divided by its standard error from the pooled replicate
variance; the backends agree when every |z| <= z_max(R), the 3-sigma bound of a t
statistic with 2R - 2 degrees of freedom (agreement_threshold).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from gpu_backend.agreement_threshold import z_max
from gpu_backend.identity import regime_returns
from regime_model import run_summary
from regime_model.backend import Backend
from regime_model.batch_join import run_together
from regime_model.types import FloatArray
from regime_model.update import InstrumentCarry, ModelSpec, build_batch, refresh
from regime_model.width import wide_spec

if TYPE_CHECKING:  # typing only: importing the backend imports wgpu
    from gpu_backend.wgpu_backend import WgpuBackend

# Draws of the same chain, float32 device against float64 host: relative to max(|x|, 1).
# float32 rounding (6e-8) grows along a chain, each draw starting where the last ended: by
# ~1e4 over 30 draws of ~5 leapfrog steps since the step size aims at mean acceptance 0.8
# rather than landing at 0.95 (regime_model/step_size.py; steps ~1.6x longer, trajectories
# more chaotic): lavapipe's worst draw over 12 chains x 30 draws went from <1e-5 to 3e-4,
# and at a warm update's 4-8 leapfrog steps (a third longer trajectories than 3-6) to
# 4.4e-3 on summer_2008's level-shift chains. The accept decisions, which carry the
# sampler's correctness, must still all agree; a wrong gradient parts them within draws.
DRAW_TOL = 1e-2
# The move's acceptance probability min(1, exp(gain)) is a difference of two log densities
# of ~256 terms in float32 (hi/lo sums): a few 1e-4 apart between the backends at most.
SHIFT_RATE_TOL = 1e-3
_SE_FLOOR = 1e-4  # quantities that every replicate puts at the same value are equal


class Agreement(NamedTuple):
    replicates: int
    instruments: int
    max_abs_z: float
    cpu_seconds: float
    gpu_seconds: float
    passed: bool
    z_bound: float  # z_max(replicates)


Carries = list[InstrumentCarry | None]


def _estimates(
    backend: Backend, returns: FloatArray, spec: ModelSpec, seeds: range, carries: Carries
) -> FloatArray:
    """[R, N, 2]: per replicate and instrument, P(turbulent) and log predictive sd."""
    keys = np.arange(len(returns), dtype=np.uint32)
    out = []
    for seed in seeds:
        est, _, _ = refresh(returns, carries, keys, 2, seed, spec, backend)
        out.append(np.stack([est.regime_probs[:, -1], np.log(est.pred_vol)], axis=1))
    return np.array(out)


def _timed(
    backend: Backend, returns: FloatArray, spec: ModelSpec, seeds: range, carries: Carries
) -> tuple[FloatArray, float]:
    import time  # noqa: PLC0415

    t0 = time.perf_counter()
    values = _estimates(backend, returns, spec, seeds, carries)
    return values, time.perf_counter() - t0


def compare_samplers(
    gpu: Backend,
    cpu: Backend,
    spec: ModelSpec,
    instruments: int = 3,
    replicates: int = 6,
) -> Agreement:
    """Cold starts on both backends (the host driver over each one's kernels)."""
    returns = 0.01 * regime_returns(instruments, spec.window, np.random.default_rng(7))
    return _agreement(gpu, cpu, spec, returns, [None] * instruments, replicates)


def _warm_start(
    cpu: Backend, spec: ModelSpec, instruments: int, series: FloatArray | None = None
) -> tuple[FloatArray, Carries]:
    """The next window of returns and carries from a cold numpy update of the one before
    (`series`: [instruments, window + 1] returns; default: gpu_backend.identity's). The
    update's own batch only: extension blocks would start the compared chains elsewhere
    (their carries are an extension's chains), and what is compared is one batch."""
    returns = series
    if returns is None:
        returns = 0.01 * regime_returns(instruments, spec.window + 1, np.random.default_rng(7))
    keys = np.arange(instruments, dtype=np.uint32)
    one_batch = replace(spec, extend_max=0)
    _, carries, _ = refresh(returns[:, :-1], [None] * instruments, keys, 1, 999, one_batch, cpu)
    return returns[:, 1:], list(carries)


def compare_warm_samplers(
    gpu: Backend, cpu: Backend, spec: ModelSpec, instruments: int = 3, replicates: int = 6
) -> Agreement:
    """Warm starts, step-size re-adaptation included (the wgpu one-submission update)."""
    returns, carries = _warm_start(cpu, spec, instruments)
    return _agreement(gpu, cpu, spec, returns, carries, replicates)


def _agreement(
    gpu: Backend,
    cpu: Backend,
    spec: ModelSpec,
    returns: FloatArray,
    carries: Carries,
    replicates: int,
) -> Agreement:
    instruments = len(returns)
    seeds = range(1000, 1000 + replicates)
    a, cpu_s = _timed(cpu, returns, spec, seeds, carries)
    b, gpu_s = _timed(gpu, returns, spec, seeds, carries)
    pooled = (a.var(axis=0, ddof=1) + b.var(axis=0, ddof=1)) / 2.0
    se = np.maximum(np.sqrt(2.0 * pooled / replicates), _SE_FLOOR)
    z = np.abs(a.mean(axis=0) - b.mean(axis=0)) / se
    max_z = float(z.max())
    bound = z_max(replicates)
    return Agreement(replicates, instruments, max_z, cpu_s, gpu_s, max_z <= bound, bound)


class DrawAgreement(NamedTuple):
    lanes: int
    draws: int
    decision_mismatches: int  # draws one backend accepted and the other rejected
    max_draw_err: float
    passed: bool
    # lanes whose path the level-shift move changed (against the same run without it, on
    # the host): with spec.shift_moves, the moves were tested, not only switched on
    shifted_lanes: int = 0
    # the largest difference of a lane's mean acceptance probability of the move (what
    # the two-readings check reads, regime_model.readings); 0 without the move
    max_shift_rate_err: float = 0.0


def compare_draw_phase(
    gpu: Backend,
    cpu: Backend,
    spec: ModelSpec,
    instruments: int = 3,
    series: FloatArray | None = None,
) -> DrawAgreement:
    """A warm update without re-adaptation on both backends, chain by chain: the same
    random numbers give the same accept decisions and the same draws within DRAW_TOL.

    (With re-adaptation the float32 and float64 step sizes part by rounding, and a step
    search amplifies it through acceptance rates near 0 or 1 of chaotic trajectories;
    there the backends agree in distribution: `compare_warm_samplers`.)
    """
    spec = replace(spec, warmup_warm=0)
    returns, carries = _warm_start(cpu, spec, instruments, series)
    keys = np.arange(instruments, dtype=np.uint32)
    batch, _ = build_batch(returns, carries, keys, 2, 1000, spec)
    ran_cpu, ran_gpu = cpu.run_update(batch), gpu.run_update(batch)
    a, b = ran_cpu.draws, ran_gpu.draws
    rate_err = 0.0
    if ran_cpu.shift_rate is not None and ran_gpu.shift_rate is not None:
        rate_err = float(np.abs(ran_cpu.shift_rate - ran_gpu.shift_rate).max())
    elif (ran_cpu.shift_rate is None) != (ran_gpu.shift_rate is None):
        rate_err = float("inf")  # one backend made the move and the other did not
    shifted = 0
    if spec.shift_moves:
        plain = cpu.run_update(batch._replace(config=batch.config._replace(shift_moves=False)))
        shifted = int((plain.draws != a).any(axis=(1, 2)).sum())
    rejected = [(x[:, 1:] == x[:, :-1]).all(axis=2) for x in (a, b)]
    mismatches = int((rejected[0] != rejected[1]).sum())
    err = float((np.abs(a - b) / np.maximum(np.abs(a), 1.0)).max())
    L, S, _ = a.shape
    passed = mismatches == 0 and err <= DRAW_TOL and rate_err <= SHIFT_RATE_TOL
    return DrawAgreement(L, S, mismatches, err, passed, shifted, rate_err)


# Lane threads where the device's own backend runs its HMM kernels a thread per lane (a CPU
# adapter, whose lane sampler, where it has one, runs at its subgroup size: lane_threads.py):
# the checks of what only the lane sampler does run both at this count, as tests/gpu_backend
# do on lavapipe.
CPU_LANE_THREADS = 8


class JointAgreement(NamedTuple):
    accounts: int
    lanes: int
    runs_differing: int  # runs whose draws differ in any bit from the same run alone
    passed: bool
    # the same runs joined into one run of one backend (batch_join: one dispatch where the
    # lane sampler runs, each account's lanes on its own step schedule): runs differing
    joined_differing: int = 0


def compare_joint_submission(gpu: WgpuBackend, cpu: Backend, spec: ModelSpec) -> JointAgreement:
    """Two accounts' warm runs (a backend each, on `gpu`'s device) in one submission, and
    joined into one run (regime_model.batch_join), against each run alone: the same bits
    (gpu_backend.joint_submission). A CPU adapter
    runs them with the lane sampler at CPU_LANE_THREADS threads a lane, a GPU at its own
    count."""
    from gpu_backend.joint_submission import run_in_one_submission  # noqa: PLC0415
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415 - imports wgpu

    threads = gpu.kernels.lane_threads or CPU_LANE_THREADS
    backends = [WgpuBackend(gpu.device, lane_threads=threads, wake_clocks=False)
                for _ in range(2)]  # fmt: skip
    batches = []
    for n, seed in ((3, 11), (2, 12)):  # accounts of their own returns, keys and seeds
        series = 0.01 * regime_returns(n, spec.window + 1, np.random.default_rng(seed))
        returns, carries = _warm_start(cpu, spec, n, series)
        batches.append(build_batch(returns, carries, np.arange(n), 2, seed, spec)[0])
    alone = [b.run_update(x) for b, x in zip(backends, batches, strict=True)]
    together = run_in_one_submission(list(zip(backends, batches, strict=True)))
    joined = run_together(backends[0], batches)
    differing, joined_differing = (sum(not np.array_equal(a.draws, t.draws)
                                       for a, t in zip(alone, runs, strict=True))
                                   for runs in (together, joined))  # fmt: skip
    lanes = sum(len(b.y) for b in batches)
    passed = differing == 0 and joined_differing == 0
    return JointAgreement(len(batches), lanes, differing, passed, joined_differing)


class SummaryAgreement(NamedTuple):
    instruments: int
    max_err: float  # relative (to 1 below 1e-3 in size): estimate and metric, device vs host
    gate_mismatches: int  # instruments whose gate decision differs
    passed: bool
    wide_instruments: int = 0  # of them, a wide run's (extension_chains chains: the wide pass)


SUMMARY_TOL = 1e-4  # float32 sums and ESS against the host's float64 on the same draws
_SUMMARY_FIELDS = ("regime_probs", "pred_mean", "pred_vol", "p_turbulent_sd",
                   "p_turbulent_mcse", "vol_mcse")  # fmt: skip


def compare_run_summary(gpu: WgpuBackend, cpu: Backend, spec: ModelSpec) -> SummaryAgreement:
    """Warm runs' summaries made on the device (regime_model.run_summary) against the
    host's from the same runs' draws: the estimate the strategy reads, the gate's Monte
    Carlo errors and decisions, and the next metric; 8 instruments at `spec.chains` chains
    and, where the device has the wide pass (a GPU), 2 of a wide run; on `gpu`'s lane
    sampler (a CPU adapter without one: a backend with it at CPU_LANE_THREADS threads a
    lane)."""
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415 - imports wgpu

    backend = gpu if gpu.lane_sampler is not None else WgpuBackend(
        gpu.device, lane_threads=CPU_LANE_THREADS, wake_clocks=False)  # fmt: skip
    checks = [(spec, 8)]
    sampler = backend.lane_sampler
    if sampler is not None and sampler.summary.wide:  # a GPU's: a CPU adapter has none
        checks.append((wide_spec(spec), 2))
    found = [_summary_errors(backend, cpu, s, n) for s, n in checks]
    n, wide = sum(n for _, n in checks), sum(n for s, n in checks if s.chains > spec.chains)
    if any(f is None for f in found):
        return SummaryAgreement(n, float("inf"), n, False, wide)
    err, mismatches = max(f[0] for f in found if f), sum(f[1] for f in found if f)
    return SummaryAgreement(n, err, mismatches, err <= SUMMARY_TOL and mismatches == 0, wide)


def _summary_errors(
    backend: Backend, cpu: Backend, spec: ModelSpec, n: int
) -> tuple[float, int] | None:
    """The largest relative error of the device summary's estimate and metric against the
    host's, and the gate decisions that differ; None where the run brought no summary."""
    from regime_model.estimate import estimate_of  # noqa: PLC0415

    series = 0.01 * regime_returns(n, spec.window + 1, np.random.default_rng(13))
    returns, carries = _warm_start(cpu, spec, n, series)
    batch, scale = build_batch(returns, carries, np.arange(n), 2, 13, spec)
    result = backend.run_update(batch)
    if run_summary.usable(result.summary, spec.chains, spec.n_states) is None:
        return None
    device = estimate_of(result, batch.y, scale, spec, backend, diagnose=False)
    host = estimate_of(result._replace(summary=None), batch.y, scale, spec, backend,
                       diagnose=False)  # fmt: skip
    pairs = [(getattr(device.estimate, f), getattr(host.estimate, f)) for f in _SUMMARY_FIELDS]
    pairs += [(a.inv_mass, b.inv_mass) for a, b in zip(device.carries, host.carries, strict=True)]
    err = max(float((np.abs(a - b) / np.maximum(np.abs(b), 1e-3)).max()) for a, b in pairs)
    return err, int((device.estimate.converged != host.estimate.converged).sum())
