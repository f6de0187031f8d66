"""`regime-trader bench`: measurements, each as one JSON document.

`bench model` (also plain `bench`, kept for the scripts that use it): model-update
throughput on a named batch shape. trial: 268 instruments x 4 chains in one batch (the
trial's 5 accounts hold 268 in all), T = 256, K = 2. small: 32 instruments. Measures
batched value-and-gradient calls per second (and lane-gradients per second), a cold and a
warm update, and the effective samples per second per instrument of the warm update
(worst bulk ESS over parameters and over the decision quantities, divided by the
update's wall time).
`bench ops` sweeps every kernel; `bench supervision` and `bench reload` time the real
daemon. The proofs (chaos, soak) are `regime-trader prove`. Every mode that yields figures
takes `--json` (one JSON document on stdout) and `--out PATH` (the JSON in a file):
service/commands/output.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from gpu_backend.bench.kernels import add_arguments as add_kernels_arguments
from gpu_backend.bench.kernels import run as run_kernels
from service.commands.bench_estimates import add_estimate_commands
from service.commands.bench_round import add_round_command
from service.commands.output import (
    Progress,
    add_output_flags,
    emit,
    logs_to_stderr,
    progress_at_tty,
)
from service.commands.shards import add_reshard_bench

SHAPES = {"trial": 268, "small": 32}
CHAINS, WINDOW, STATES = 4, 256, 2
GRAD_REPEATS = 20


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bench", help="measure: model (the default), ops, kernels, supervision, reload, ...",
        description="Measurements as JSON. With no WHAT: model (the options below are its).",
    )
    _model_args(parser)  # plain `bench` is `bench model`: scripts and docs use it
    kinds = parser.add_subparsers(metavar="WHAT")
    _model_args(kinds.add_parser("model", help="model-update throughput on a batch shape"))
    ops = kinds.add_parser("ops", help="sweep every kernel, numpy vs wgpu, 1..10,000 lanes")
    ops.add_argument("dir", type=Path, metavar="DIR", help="write DIR/ops-<host>-<date>.csv")
    ops.set_defaults(handler=ops_handler)
    kernels = kinds.add_parser("kernels", help="threads per lane: gradient and update GPU time")
    add_kernels_arguments(kernels)  # its --out PATH (required): the JSON file
    kernels.add_argument("--json", action="store_true",
                         help="print the JSON document on stdout (the rows go to stderr)")
    kernels.set_defaults(handler=kernels_handler)
    _daemon_parser(kinds, "supervision", "SIGKILL-to-first-update and idle CPU of the supervisor")
    _daemon_parser(kinds, "reload", "time from an editor-style save to config.applied")
    _stages_parser(kinds)
    add_round_command(kinds)
    add_estimate_commands(kinds)
    add_reshard_bench(kinds)


def _daemon_parser(
    kinds: argparse._SubParsersAction[argparse.ArgumentParser], name: str, what: str
) -> None:
    daemon = kinds.add_parser(name, help=what)
    add_output_flags(daemon, "the figures")
    daemon.set_defaults(handler=daemon_handler, what=name)


def _stages_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stages = kinds.add_parser("stages", help="fetch, strategy, checkpoint, orders of a trader")
    stages.add_argument("--instruments", type=int, default=268)
    stages.add_argument("--window", type=int, default=256)
    stages.add_argument("--updates", type=int, default=20, help="warm updates timed")
    stages.add_argument("--backend", choices=("numpy", "wgpu", "auto"), default="numpy",
                        help="the model stage's backend (default numpy, as earlier figures; "
                        "wgpu: the checkpoint holds its float32 chains' carries, as the "
                        "daemon's on a GPU does)")
    stages.add_argument("--pace-ms", type=float, default=0.0,
                        help="start each update at least this long after the last one "
                        "started, as the daemon's bars come a bar apart (default 0: back "
                        "to back)")
    add_output_flags(stages, "the figures")
    stages.set_defaults(handler=stages_handler)


def stages_handler(args: argparse.Namespace) -> int:
    from service.bench import stages  # noqa: PLC0415 - tools load on demand

    logs_to_stderr()
    emit(stages.measure(args.instruments, args.window, args.updates, args.backend,
                        args.pace_ms / 1e3), args)
    return 0


def _model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small")
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--trajectory", choices=("jitter", "chees"), default="jitter")
    parser.add_argument(
        "--chained-updates", type=int, default=5, metavar="R",
        help="R warm updates of one window, their chains joined, for the worst instrument's "
        "ESS from chains of R x 40 draws (5: the NumPyro peer's 200); 0: skip",
    )  # fmt: skip
    add_output_flags(parser, "the figures")
    parser.set_defaults(handler=model_handler)


def model_handler(args: argparse.Namespace) -> int:
    logs_to_stderr()
    emit(run(args.shape, args.backend, args.trajectory, progress_at_tty("bench model"),
             args.chained_updates), args)  # fmt: skip
    return 0


def ops_handler(args: argparse.Namespace) -> int:
    from gpu_backend.bench.ops import run_op_sweep  # noqa: PLC0415 - imports wgpu

    logs_to_stderr()
    run_op_sweep(args.dir)
    return 0


def kernels_handler(args: argparse.Namespace) -> int:
    """The sweep prints a JSON line per setting as it goes (its progress) and writes the
    whole document to --out; with --json those lines go to stderr and the document, once
    written, to stdout."""
    logs_to_stderr()
    if not args.json:
        return run_kernels(args, sys.argv[3:])
    with contextlib.redirect_stdout(sys.stderr):
        code = run_kernels(args, sys.argv[3:])
    print(json.dumps(json.loads(args.out.read_text())), flush=True)
    return code


def daemon_handler(args: argparse.Namespace) -> int:
    """Figures taken from a real daemon run in a temporary folder."""
    logs_to_stderr()
    figures: dict[str, Any] = {"host": platform.node(), "date": time.strftime("%Y-%m-%d")}
    if args.what == "supervision":
        from service.bench import supervision  # noqa: PLC0415 - tools load on demand

        figures["supervision"] = supervision.measure()
    else:
        from service.bench import reload  # noqa: PLC0415

        figures["reload"] = reload.measure()
    emit(figures, args)
    return 0


def _synthetic_returns(N: int) -> Any:
    """Two-regime returns (vol ratio 2x, per-instrument scale 0.5-2x), seed 0."""
    import numpy as np  # noqa: PLC0415

    gen = np.random.default_rng(0)
    flips = gen.random((N, WINDOW + 40)) < 0.02
    vols = np.where(np.cumsum(flips, axis=1) % 2 == 1, 0.02, 0.01) * gen.uniform(0.5, 2, (N, 1))
    return gen.normal(0.0, vols)


def _gradient_rate(backend: Any, returns: Any, spec: Any) -> float:
    import numpy as np  # noqa: PLC0415

    from regime_model.update import prior_centre  # noqa: PLC0415

    theta = np.repeat(prior_centre(STATES, spec.priors)[None], len(returns) * CHAINS, axis=0)
    y = np.repeat(returns[:, :WINDOW] / returns.std(axis=1, keepdims=True), CHAINS, axis=0)
    backend.hmm_value_and_grad(theta, y, STATES, spec.priors)  # warm the allocator
    t0 = time.perf_counter()
    for _ in range(GRAD_REPEATS):
        backend.hmm_value_and_grad(theta, y, STATES, spec.priors)
    return GRAD_REPEATS / (time.perf_counter() - t0)


def _no_progress(done: int, total: int) -> None:
    pass


def run(
    shape: str, backend_name: str, trajectory: str, progress: Progress | None = None,
    chained_updates: int = 0,
) -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415 - numpy and the model load for this command only

    from gpu_backend import select_backend  # noqa: PLC0415
    from gpu_backend.bench.chained_ess import chained_runs  # noqa: PLC0415
    from regime_model.update import ModelSpec, refresh  # noqa: PLC0415

    N = SHAPES[shape]
    backend = select_backend(backend_name)
    returns = _synthetic_returns(N)
    spec = ModelSpec(trajectory=trajectory)
    # four stages: the gradients, a cold and a warm update, the chained warm updates
    step = progress or _no_progress
    step(0, 4)
    rate = _gradient_rate(backend, returns, spec)
    step(1, 4)
    keys = np.arange(N)
    t0 = time.perf_counter()
    est, carries, info = refresh(returns[:, :WINDOW], [None] * N, keys, 1, 7, spec, backend)
    cold_s = time.perf_counter() - t0
    cold_acceptance = float(est.acceptance.mean())
    step(2, 4)
    t0 = time.perf_counter()
    est, carries, warm_info = refresh(returns[:, 1 : WINDOW + 1], carries, keys, 2, 7, spec,
                                      backend)  # fmt: skip
    warm_s = time.perf_counter() - t0
    step(3, 4)
    chained = {} if chained_updates < 1 else chained_runs(
        backend, returns[:, 1 : WINDOW + 1], carries, keys, 3, 7, spec, chained_updates).figures()
    step(4, 4)
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
        # Where the warm update's time went (RefreshInfo: the device run, the host's summary,
        # the run-on blocks, what is left of the parameters' diagnostics at the end).
        "warm_timings_ms": {k: round(v, 1) for k, v in warm_info.timings_ms.items()},
        "warm_extended": warm_info.extended,
        "warm_ess_bulk_min_median": float(np.median(est.ess_bulk)),
        # The sampler-efficiency figure peers report: the worst instrument's bulk ESS (its
        # worst parameter) per second of the update (docs/benchmarks.md, against NumPyro).
        "warm_ess_bulk_min": float(est.ess_bulk.min()),
        "warm_min_ess_per_s": round(float(est.ess_bulk.min()) / warm_s, 2),
        "warm_ess_per_s_per_instrument_median": round(float(np.median(est.ess_bulk)) / warm_s, 2),
        # The same from chains long enough to see a slow instrument's autocorrelation:
        # `chained_updates` warm updates of one window, joined (gpu_backend/bench/chained_ess.py).
        **chained,
        "warm_ess_per_gradient_call_median": round(
            float(np.median(est.ess_bulk)) / warm_info.gradient_evals, 4
        ),
        "warm_converged_fraction": float(est.converged.mean()),
        "warm_divergences": int(est.divergences.sum()),
        "warm_ebfmi_min": float(est.ebfmi.min()),
        "warm_trajectory_length_median": float(np.median(est.trajectory_length)),
        # Mean over instruments of the chains' mean acceptance while sampling (target 0.8).
        "cold_acceptance_mean": round(cold_acceptance, 4),
        "warm_acceptance_mean": round(float(est.acceptance.mean()), 4),
        "python": sys.version.split()[0],
    }
