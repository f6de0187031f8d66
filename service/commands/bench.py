"""`regime-trader bench`: model-update throughput on a named batch shape, as JSON.

trial: 268 instruments x 4 chains in one batch (the trial's 5 accounts hold 268 in all),
T = 256, K = 2. small: 32 instruments. Measures batched value-and-gradient calls per
second (and lane-gradients per second), a cold and a warm update, and the effective
samples per second per instrument of the warm update (worst bulk ESS over parameters and
over the decision quantities, divided by the update's wall time).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

SHAPES = {"trial": 268, "small": 32}
CHAINS, WINDOW, STATES = 4, 256, 2
GRAD_REPEATS = 20


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("bench", help="measure model-update throughput")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small")
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--trajectory", choices=("jitter", "chees"), default="jitter")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the figures here")
    parser.add_argument(
        "--ops", type=Path, metavar="DIR", help="instead: sweep every kernel, numpy vs wgpu, "
        "1..10,000 lanes; write DIR/ops-<host>-<date>.csv (gpu_backend.op_sweep)",
    )  # fmt: skip
    parser.add_argument("--supervision", action="store_true",
                        help="instead: SIGKILL-to-first-update and idle CPU of the supervisor")
    parser.add_argument("--reload", action="store_true",
                        help="instead: time from an editor-style save to config.applied")
    parser.add_argument("--soak", type=float, metavar="MINUTES",
                        help="instead: run the embedded default on a fast clock this long, "
                        "sampling RSS, descriptors, database size (service.soak)")
    parser.add_argument("--sample-s", type=float, default=60.0, help="soak sampling period")
    parser.add_argument("--chaos", type=int, metavar="KILLS",
                        help="instead: SIGKILL workers at random fault points KILLS times over "
                        "2 accounts, then check crash equivalence (service.chaos); exit 1 if "
                        "the end state differs from an uninterrupted run")
    parser.add_argument("--seed", type=int, default=0, help="the chaos run's seed")
    parser.set_defaults(handler=handler)


def handler(args: argparse.Namespace) -> int:
    if args.ops is not None:
        from gpu_backend.op_sweep import run_op_sweep  # noqa: PLC0415 - imports wgpu

        run_op_sweep(args.ops)
        return 0
    if args.soak is not None:
        from service.soak import run_soak  # noqa: PLC0415

        out = args.json or Path(f"soak-{time.strftime('%Y%m%d-%H%M%S')}.json")
        print(json.dumps(run_soak(args.soak, out, args.sample_s), indent=1))
        return 0
    if args.chaos is not None:
        from service.chaos import run_chaos  # noqa: PLC0415

        result = run_chaos(args.chaos, args.seed)
        text = json.dumps(result, indent=1)
        if args.json:
            args.json.write_text(text + "\n")
        print(text)
        return 0 if result["equivalent"] else 1
    if args.supervision or args.reload:
        figures = _daemon_figures(args.supervision, args.reload)
    else:
        figures = run(args.shape, args.backend, args.trajectory)
    text = json.dumps(figures, indent=1)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


def _daemon_figures(supervision: bool, reload: bool) -> dict[str, Any]:
    """Figures taken from a real daemon run in a temporary folder."""
    from service.reload import measure as reload_measure  # noqa: PLC0415
    from service.supervisor import measure as supervision_measure  # noqa: PLC0415

    figures: dict[str, Any] = {"host": platform.node(), "date": time.strftime("%Y-%m-%d")}
    if supervision:
        figures["supervision"] = supervision_measure.measure()
    if reload:
        figures["reload"] = reload_measure.measure()
    return figures


def _gradient_rate(backend: Any, theta: Any, y: Any, priors: Any) -> float:
    backend.hmm_value_and_grad(theta, y, STATES, priors)  # warm the allocator
    t0 = time.perf_counter()
    for _ in range(GRAD_REPEATS):
        backend.hmm_value_and_grad(theta, y, STATES, priors)
    return GRAD_REPEATS / (time.perf_counter() - t0)


def run(shape: str, backend_name: str, trajectory: str) -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415 - numpy and the model load for this command only

    from gpu_backend import select_backend  # noqa: PLC0415
    from regime_model.update import ModelSpec, prior_centre, refresh  # noqa: PLC0415

    N = SHAPES[shape]
    backend = select_backend(backend_name)
    gen = np.random.default_rng(0)
    flips = gen.random((N, WINDOW + 40)) < 0.02
    vols = np.where(np.cumsum(flips, axis=1) % 2 == 1, 0.02, 0.01) * gen.uniform(0.5, 2, (N, 1))
    returns = gen.normal(0.0, vols)
    spec = ModelSpec(trajectory=trajectory)
    theta = np.repeat(prior_centre(STATES, spec.priors)[None], N * CHAINS, axis=0)
    y = np.repeat(returns[:, :WINDOW] / returns.std(axis=1, keepdims=True), CHAINS, axis=0)
    rate = _gradient_rate(backend, theta, y, spec.priors)
    keys = np.arange(N)
    t0 = time.perf_counter()
    est, carries, info = refresh(returns[:, :WINDOW], [None] * N, keys, 1, 7, spec, backend)
    cold_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    est, _, warm_info = refresh(returns[:, 1 : WINDOW + 1], carries, keys, 2, 7, spec, backend)
    warm_s = time.perf_counter() - t0
    return {
        "shape": shape,
        "instruments": N,
        "chains": CHAINS,
        "window": WINDOW,
        "states": STATES,
        "backend": backend.name,
        "trajectory": trajectory,
        "machine": f"{platform.processor() or platform.machine()}",
        "gradient_calls_per_s": round(rate, 2),
        "lane_gradients_per_s": round(rate * N * CHAINS, 1),
        "cold_update_s": round(cold_s, 3),
        "cold_gradient_calls": info.gradient_evals,
        "warm_update_s": round(warm_s, 3),
        "warm_gradient_calls": warm_info.gradient_evals,
        "warm_ess_bulk_min_median": float(np.median(est.ess_bulk)),
        "warm_ess_per_s_per_instrument_median": round(float(np.median(est.ess_bulk)) / warm_s, 2),
        "warm_ess_per_gradient_call_median": round(
            float(np.median(est.ess_bulk)) / warm_info.gradient_evals, 4
        ),
        "warm_converged_fraction": float(est.converged.mean()),
        "warm_divergences": int(est.divergences.sum()),
        "warm_ebfmi_min": float(est.ebfmi.min()),
        "warm_trajectory_length_median": float(np.median(est.trajectory_length)),
        "python": sys.version.split()[0],
    }
